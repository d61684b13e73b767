import { describe, expect, it } from "vitest";
import { resultsToRemove, type HeldResult } from "../../../../src/compute/publisher/results-to-remove.ts";

const HOUR = 3_600_000;
const NOW = Date.parse("2026-03-01T12:00:00Z");
const held = (executionId: string, hoursAgo: number, bytes: number): HeldResult => ({
  executionId,
  publishedAtMs: NOW - hoursAgo * HOUR,
  bytes,
});
const ids = (removals: { executionId: string }[]) => removals.map((r) => r.executionId);

describe("which published results the node's retention rule removes", () => {
  const results = [held("e-c", 1, 300), held("e-a", 200, 100), held("e-b", 100, 200)];

  it("removes those held for the retention period, saying after how long", () => {
    const removed = resultsToRemove(results, { periodMs: 168 * HOUR, maxTotalBytes: 0 }, NOW);
    expect(removed).toEqual([
      { executionId: "e-a", bytes: 100, why: "after 168h (Compute.Publishers.Local.RetentionPeriod)" },
    ]);
    // Exactly the period old is old enough.
    expect(ids(resultsToRemove(results, { periodMs: 100 * HOUR, maxTotalBytes: 0 }, NOW))).toEqual(["e-a", "e-b"]);
  });

  it("removes the oldest until the rest fit within the total", () => {
    const removed = resultsToRemove(results, { periodMs: 0, maxTotalBytes: 350 }, NOW);
    expect(ids(removed)).toEqual(["e-a", "e-b"]);
    expect(removed[0]?.why).toBe(
      "because its results held more than 350 (Compute.Publishers.Local.MaxTotalBytes), oldest first",
    );
    expect(resultsToRemove(results, { periodMs: 0, maxTotalBytes: 600 }, NOW)).toEqual([]);
  });

  it("counts what the period removed towards the total", () => {
    const removed = resultsToRemove(results, { periodMs: 150 * HOUR, maxTotalBytes: 500 }, NOW);
    expect(removed.map((r) => [r.executionId, r.why.split(" (")[1]])).toEqual([
      ["e-a", "Compute.Publishers.Local.RetentionPeriod)"],
    ]);
  });

  it("keeps everything with no limits, and results published after now (a clock set back)", () => {
    expect(resultsToRemove(results, { periodMs: 0, maxTotalBytes: 0 }, NOW)).toEqual([]);
    expect(resultsToRemove([held("e-f", -5, 10)], { periodMs: HOUR, maxTotalBytes: 0 }, NOW)).toEqual([]);
  });

  it("breaks a tie in age by execution id, so every sweep removes the same ones", () => {
    const tied = [held("e-2", 5, 100), held("e-1", 5, 100)];
    expect(ids(resultsToRemove(tied, { periodMs: 0, maxTotalBytes: 150 }, NOW))).toEqual(["e-1"]);
  });
});
