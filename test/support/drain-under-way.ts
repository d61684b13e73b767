import type { NodeDrain } from "../../machines/node/node-state.ts";

/** A node's drain under way, as its state holds it; tests vary only what they look at. */
export function drainUnderWay(over: Partial<NodeDrain> = {}): NodeDrain {
  return {
    status: "draining",
    deadline: "2026-01-01T00:10:00.000Z",
    keepDaemon: false,
    reason: "",
    by: { type: "operator", id: "a" },
    startedAt: "2026-01-01T00:00:00.000Z",
    ...over,
  };
}
