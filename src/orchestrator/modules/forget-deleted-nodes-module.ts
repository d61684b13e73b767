import { onDuty } from "../../cluster/on-duty.ts";
import { forgetDeletedNodes } from "../../workflows/forget-deleted-nodes.ts";
import { WorkflowHost } from "../../workflows/workflow-host.ts";
import type { Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";
import type { NodeModule } from "./node-module.ts";

/** A deleted node's liveness is forgotten, whoever deleted it (this orchestrator or another writer on the store). */
export function forgetDeletedNodesModule(context: OrchestratorContext, offers: { readonly nodes: NodeModule }): Module {
  const { store, logger, processors } = context;
  const { manager } = offers.nodes;
  return {
    name: "forget deleted nodes",
    follow() {
      // Among several orchestrators it runs with the job workflows; the others follow deletions through the read model.
      processors.add(
        onDuty(
          new WorkflowHost(forgetDeletedNodes, {
            store,
            checkpoints: store,
            handlers: { "node-liveness": (command) => manager.forgetIfGone(command.entityId) },
            logger: logger.child({ component: "workflows" }),
          }),
          context.cluster.duty("jobs"),
        ),
      );
    },
  };
}
