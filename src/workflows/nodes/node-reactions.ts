import { decideReactions } from "../../../machines/reactions/decide-reactions.ts";
import type { ReactionInput } from "../../../machines/reactions/reaction-commands.ts";
import { initialReactionsState } from "../../../machines/reactions/reactions-state.ts";
import type { DomainEvent } from "../../projections/event-envelope.ts";
import type { Workflow, WorkflowCommand } from "../workflow.ts";

export const NODE_REACTIONS = "node-reactions";
/** The handler that carries out this workflow's commands (NodeReactionRunner). */
export const NODE_WORK = "node-work";

/**
 * What the workflow asks of the executions a node has, at the moment it reacts: the job read model's JobViews.byNode,
 * once it has folded the event reacted to (afterReadModel).
 */
export interface NodeWorkQuery {
  /** The node holds an execution under way (not terminal). */
  holdsWork(nodeId: string): boolean;
  /**
   * The node, back with the event at store position `at`, may still run executions the orchestrator gave up on while
   * it was away (since its previous return).
   */
  mayRunLostWork(nodeId: string, at: number): boolean;
  /** The node holds a daemon execution under way. */
  holdsDaemonWork(nodeId: string): boolean;
}

/** A node event's decision reads no queue (decide-reactions.ts): it is taken against the empty one. */
const NO_QUEUE = initialReactionsState();

/**
 * Work follows node state, as a process manager on the store: each node event becomes the
 * reactions decider's input (machines/reactions/), and its commands are the recorded step.
 *
 * A step is recorded only for a node that holds work (or may still run lost work). Whether it does
 * is read at the moment of reacting (NodeWorkQuery, from the job read model's per-node index of
 * executions): a replay may find the work already moved and record nothing more; the first step,
 * stored under its deterministic id, still says why it was moved. What a node back may still run
 * is asked as of its return's position, so a replay after a restart gets the same answer.
 */
export function nodeReactions(query: NodeWorkQuery): Workflow {
  const labelsChanged = (nodeId: string): ReactionInput => ({
    type: "LabelsChanged",
    nodeId,
    holdsDaemonWork: query.holdsDaemonWork(nodeId),
  });
  const inputOf = (event: DomainEvent, nodeId: string, at: number): ReactionInput | undefined => {
    switch (event.type) {
      case "NodeBecameUnhealthy":
        return { type: "NodeWentSilent", nodeId, health: "UNHEALTHY", holdsWork: query.holdsWork(nodeId) };
      case "NodeBecameUnknown":
        return { type: "NodeWentSilent", nodeId, health: "UNKNOWN", holdsWork: query.holdsWork(nodeId) };
      case "NodeRejected":
        return { type: "NodeRemoved", nodeId, how: "rejected", holdsWork: query.holdsWork(nodeId) };
      case "NodeDeleted":
        return { type: "NodeRemoved", nodeId, how: "deleted", holdsWork: query.holdsWork(nodeId) };
      case "NodeBecameHealthy":
        return { type: "NodeBack", nodeId, how: "HEALTHY", mayRunLostWork: query.mayRunLostWork(nodeId, at) };
      case "NodeApproved":
        return { type: "NodeBack", nodeId, how: "approved", mayRunLostWork: query.mayRunLostWork(nodeId, at) };
      // The effective labels may have changed: the node's own report said so, or the operator set them.
      case "NodeInfoUpdated":
        return event.data.Changed.includes("Labels") ? labelsChanged(nodeId) : undefined;
      case "NodeLabelsSet":
        return labelsChanged(nodeId);
      default:
        return undefined;
    }
  };
  return {
    name: NODE_REACTIONS,
    react({ event, entityId, position }): WorkflowCommand[] {
      const reaction = inputOf(event, entityId, position);
      if (reaction === undefined) return [];
      return decideReactions(reaction, NO_QUEUE).commands.map((c) => ({
        handler: NODE_WORK,
        entityId: c.nodeId,
        type: c.type,
        reason: "reason" in c ? c.reason : c.waiting.reason,
      }));
    },
  };
}
