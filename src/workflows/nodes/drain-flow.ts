import type { Workflow, WorkflowCommand } from "../workflow.ts";
import { workflowActor } from "../workflow-actor.ts";

export const DRAIN = "node-drain";
export const DRAIN_WORKFLOW = "node-drain";
/** The actor of every automatic action of a drain. */
export const DRAIN_ACTOR = workflowActor(DRAIN_WORKFLOW);
/**
 * Seeds the ids of the placements a drain asks for. It was once the drain's actor id and stays what it was: a
 * restart replaying a drain must derive the ids it derived before.
 */
export const DRAIN_ID_SEED = "workflow-node-drain";

/**
 * A node's drain as a process manager on the store (docs/nodes.md, Drain). A drain started moves
 * the node's work: its batch executions are cancelled (the jobs workflow places their partitions
 * elsewhere), its service executions get replacements that start before they stop, its ops
 * executions finish, its daemon executions stop at the end (the drainer carries it out, and goes
 * on as executions change). A deadline reached stops each execution it found left, one recorded
 * command per execution. An undrain settles what a cut-short move left half done. Pure.
 */
export const drainFlow: Workflow = {
  name: DRAIN_WORKFLOW,
  react({ event, entityId: nodeId }): WorkflowCommand[] {
    switch (event.type) {
      case "NodeDrainStarted": {
        const why = event.data.Reason;
        return [
          {
            handler: DRAIN,
            entityId: nodeId,
            type: "MoveDrainedWork",
            reason: `node ${nodeId} is draining${why ? `: ${why}` : ""}`,
          },
        ];
      }
      case "NodeDrainDeadlineReached":
        return event.data.Left.map((l) => ({
          handler: DRAIN,
          entityId: l.ExecutionID,
          type: "StopDrainedExecution",
          reason: `the drain deadline of node ${nodeId} passed`,
        }));
      case "NodeUndrained":
        return [
          {
            handler: DRAIN,
            entityId: nodeId,
            type: "SettleUndrained",
            reason: `the drain of node ${nodeId} was ended by an operator`,
          },
        ];
      default:
        return [];
    }
  },
};
