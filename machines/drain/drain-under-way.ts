import type { NodeDrain } from "../node/node-state.ts";

/** The node's drain while it is under way; undefined once it ended, was undone, or the node was deleted. */
export function drainUnderWay(drain: NodeDrain | undefined): NodeDrain | undefined {
  return drain?.status === "draining" ? drain : undefined;
}

/** The instant (ms since the epoch) at which whatever the drain left is stopped. */
export function drainDeadlineAt(drain: NodeDrain): number {
  return Date.parse(drain.deadline);
}
