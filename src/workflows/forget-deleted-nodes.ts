import { NODE_CATEGORY, categoryOf, entityIdOf } from "../events/streams.ts";
import type { Workflow } from "./workflow.ts";

export const FORGET_LIVENESS = "ForgetNodeLiveness";

/**
 * A node deleted — by this orchestrator or by any other writer on the same store — has its
 * liveness (heartbeat times, resources, health deadline) forgotten here, so that its silence is
 * never judged again and its heartbeats are refused.
 */
export const forgetDeletedNodes: Workflow = {
  name: "forget-deleted-nodes",
  react(input) {
    const { recorded } = input;
    if (recorded.type !== "NodeDeleted" || categoryOf(recorded.stream) !== NODE_CATEGORY) return [];
    return [
      {
        handler: "node-liveness",
        entityId: entityIdOf(recorded.stream),
        type: FORGET_LIVENESS,
        reason: "the node was deleted",
      },
    ];
  },
};
