import { categoryOf, entityIdOf } from "../../src/events/streams.ts";
import type { StoreEvent } from "./store-events.ts";

/** A node the store recorded as failing (UNHEALTHY, or UNKNOWN beyond it) while its agent or sim ran. */
export interface BlamedNode {
  readonly nodeId: string;
  readonly type: string;
  readonly time: string;
  readonly position: number;
}

const FAILED_HEALTH = new Set(["NodeBecameUnhealthy", "NodeBecameUnknown"]);

/**
 * Health events that blame a running node: recorded for one of `running(nodeId)`'s nodes before
 * `until` (when the soak began to stop them). Each of the soak's nodes runs, and heartbeats, from
 * its join to then; an orchestrator restart in between is the orchestrator's absence, not theirs.
 */
export function nodesBlamedWhileRunning(
  store: readonly StoreEvent[],
  running: (nodeId: string) => boolean,
  until: number,
): BlamedNode[] {
  const blamed: BlamedNode[] = [];
  for (const e of store) {
    if (!FAILED_HEALTH.has(e.type) || categoryOf(e.stream) !== "node") continue;
    const nodeId = entityIdOf(e.stream);
    if (!running(nodeId) || Date.parse(e.time) >= until) continue;
    blamed.push({ nodeId, type: e.type, time: e.time, position: e.position });
  }
  return blamed;
}
