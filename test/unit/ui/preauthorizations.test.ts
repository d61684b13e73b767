import { describe, expect, it } from "vitest";
import type { ClusterEvent } from "../../../ui/src/api/types.ts";
import { batches, outstandingPreauthorizations } from "../../../ui/src/preauthorization/preauthorizations.ts";

let position = 0;
/** A node event as the feed sends it, at the next store position. */
function event(type: string, nodeId: string, data: Record<string, unknown> = {}, reason?: string): ClusterEvent {
  position++;
  return {
    id: `e-${position}`,
    type,
    stream: `node-${nodeId}`,
    revision: 0,
    position,
    time: `2026-11-30T08:00:${String(position).padStart(2, "0")}.000Z`,
    data,
    metadata: { actor: { type: "operator", id: "alice" }, ...(reason === undefined ? {} : { reason }) },
  } as ClusterEvent;
}

describe("outstandingPreauthorizations", () => {
  it("keeps the ids pre-authorised and not since revoked, deleted or joined, with who, when and why", () => {
    const pre = (id: string, reason: string, key?: string) =>
      event("NodePreauthorized", id, { NodeID: id, Reason: reason, ...(key === undefined ? {} : { PublicKey: key }) });
    const events = [
      pre("a", "rack 7", "UKEY"),
      pre("b", "second box"),
      pre("c", "joins"),
      pre("d", "deleted"),
      event("NodePreauthorizationRevoked", "b", { NodeID: "b" }, "order cancelled"),
      event("NodeRegistered", "c"),
      event("NodeDeleted", "d"),
      pre("b", "ordered again"),
    ];
    // The feed's pages and the per-id reads come in any order: store positions say which came last.
    expect(outstandingPreauthorizations([...events].reverse())).toEqual([
      { nodeId: "a", publicKey: "UKEY", reason: "rack 7", by: "operator:alice", at: events[0]!.time, position: 1 },
      { nodeId: "b", reason: "ordered again", by: "operator:alice", at: events[7]!.time, position: 8 },
    ]);
  });

  it("reads the reason from the event's metadata when its data has none, and ignores other streams", () => {
    const e = event("NodePreauthorized", "x", { NodeID: "x" }, "from the message");
    const job = { ...event("NodePreauthorized", "y"), stream: "job-y" };
    expect(outstandingPreauthorizations([e, job]).map((p) => [p.nodeId, p.reason])).toEqual([
      ["x", "from the message"],
    ]);
  });
});

describe("batches", () => {
  it("splits ids into groups the feed takes, keeping their order", () => {
    expect(batches([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(batches([], 10)).toEqual([]);
  });
});
