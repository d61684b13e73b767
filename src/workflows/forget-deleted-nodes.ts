import type { Workflow } from "./workflow.ts";

export const FORGET_LIVENESS = "ForgetNodeLiveness";

/**
 * A node deleted — by this orchestrator or by any other writer on the same store — has its
 * liveness (heartbeat times, resources, health deadline) forgotten here, so that its silence is
 * never judged again and its heartbeats are refused.
 */
export const forgetDeletedNodes: Workflow = {
  name: "forget-deleted-nodes",
  react({ event, entityId }) {
    if (event.type !== "NodeDeleted") return [];
    return [{ handler: "node-liveness", entityId, type: FORGET_LIVENESS, reason: "the node was deleted" }];
  },
};
