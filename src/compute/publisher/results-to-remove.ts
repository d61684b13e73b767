import { formatExactBytes } from "../../config/byte-size.ts";
import { formatDuration } from "../../config/duration.ts";

/**
 * How long a node keeps its published results, and how much of them: Compute.Publishers.Local.RetentionPeriod and
 * Compute.Publishers.Local.MaxTotalBytes (0: no limit of that kind).
 */
export interface RetentionRule {
  readonly periodMs: number;
  readonly maxTotalBytes: number;
}

/** A published result the node holds: its archive's size and when it was written. */
export interface HeldResult {
  readonly executionId: string;
  readonly publishedAtMs: number;
  readonly bytes: number;
}

/** A result the rule removes, with why (said after "removed from node …"). */
export interface ResultRemoval {
  readonly executionId: string;
  readonly bytes: number;
  readonly why: string;
}

/**
 * The results the rule removes at `nowMs`, oldest first: every one held for the retention period, then the oldest
 * of the rest until what remains fits within the total. Pure: the caller reads the disk and the clock.
 */
export function resultsToRemove(held: readonly HeldResult[], rule: RetentionRule, nowMs: number): ResultRemoval[] {
  const oldestFirst = [...held].sort(
    (a, b) => a.publishedAtMs - b.publishedAtMs || a.executionId.localeCompare(b.executionId),
  );
  let total = oldestFirst.reduce((sum, r) => sum + r.bytes, 0);
  const removals: ResultRemoval[] = [];
  for (const r of oldestFirst) {
    let why: string;
    if (rule.periodMs > 0 && nowMs - r.publishedAtMs >= rule.periodMs)
      why = `after ${formatDuration(rule.periodMs)} (Compute.Publishers.Local.RetentionPeriod)`;
    else if (rule.maxTotalBytes > 0 && total > rule.maxTotalBytes)
      why =
        `because its results held more than ${formatExactBytes(rule.maxTotalBytes)} ` +
        "(Compute.Publishers.Local.MaxTotalBytes), oldest first";
    // Oldest first: every later one is younger, and what remains already fits.
    else break;
    removals.push({ executionId: r.executionId, bytes: r.bytes, why });
    total -= r.bytes;
  }
  return removals;
}
