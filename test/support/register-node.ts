import { randomUUID } from "node:crypto";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import type { EventStore } from "../../src/events/store/event-store.ts";
import { computeInfo } from "./fixtures.ts";
import type { ManualClock } from "./manual-clock.ts";

/** An approved compute node registered straight into the store (its NodeRegistered event), as of the clock's now. */
export async function registerNode(store: EventStore, clock: ManualClock, nodeId: string): Promise<void> {
  const registered = encodeNodeEvent(
    {
      type: "NodeRegistered",
      data: { NodeID: nodeId, NodeType: "Compute", Info: computeInfo(nodeId), Membership: "APPROVED", Lifecycle: 1 },
    },
    {
      time: new Date(clock.now()).toISOString(),
      actor: { type: "system", id: "test" },
      correlationId: "c",
      causationId: "c",
    },
    randomUUID(),
  );
  await store.append(`node-${nodeId}`, [registered], "no_stream");
}
