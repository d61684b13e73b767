import { NODE_CATEGORY, categoryOf, entityIdOf } from "../../events/streams.ts";
import type { Workflow, WorkflowCommand } from "../workflow.ts";

export const NODE_REACTIONS = "node-reactions";
/** The handler that carries out this workflow's commands (NodeReactionRunner). */
export const NODE_WORK = "node-work";
/** The node went silent: its work is moved at the eviction rate (eviction-rule.ts). */
export const QUEUE_NODE_LOSS = "QueueNodeLoss";
/** The node was rejected or deleted by an operator: its work is moved at once. */
export const LOSE_NODE_WORK = "LoseNodeWork";
/** The node is back: it is told to stop what was lost with it. */
export const STOP_LOST_WORK = "StopLostWork";
/** The node's labels changed: daemon executions of jobs it no longer matches are stopped. */
export const CHECK_DAEMON_MATCH = "CheckDaemonMatch";

/**
 * What the workflow asks of the executions a node has, at the moment it reacts (the job read model and the runner's own
 * creations).
 */
export interface NodeWorkQuery {
  /** The node holds an execution under way (not terminal). */
  holdsWork(nodeId: string): boolean;
  /** The node may still run executions the orchestrator gave up on while it was away. */
  mayRunLostWork(nodeId: string): boolean;
  /** The node holds a daemon execution under way. */
  holdsDaemonWork(nodeId: string): boolean;
}

/** Node events whose effective labels may have changed: the node's own report, or the operator's labels. */
const LABEL_CHANGES = new Set(["NodeInfoUpdated", "NodeLabelsSet"]);

function labelsMayHaveChanged(type: string, data: unknown): boolean {
  if (!LABEL_CHANGES.has(type)) return false;
  if (type !== "NodeInfoUpdated") return true;
  const changed = (data as { Changed?: unknown }).Changed;
  return !Array.isArray(changed) || changed.includes("Labels");
}

/**
 * Work follows node state (Nodes Manager epic 9–12), as a process manager on the store:
 * - UNHEALTHY or UNKNOWN: the node's executions under way are lost (batch and service get a
 *   replacement elsewhere, ops fail, daemon fail and come back when the node does), at the
 *   eviction rate, which pauses when much of the fleet went silent at once;
 * - REJECTED or deleted: the same, at once (an operator's decision, not silence);
 * - HEALTHY again, or approved again: the node is told to stop what was lost with it;
 * - labels changed: daemon executions on it whose job no longer matches are stopped.
 *
 * A step is recorded only for a node that holds work (or may still run lost work): node events
 * are many, and most nodes run nothing when their health changes. Whether it does is read at the
 * moment of reacting (NodeWorkQuery). A replay may find the work already moved and record nothing
 * more; the first step, stored under its deterministic id, still says why it was moved.
 */
export function nodeReactions(query: NodeWorkQuery): Workflow {
  return {
    name: NODE_REACTIONS,
    react(input): WorkflowCommand[] {
      const { recorded } = input;
      if (categoryOf(recorded.stream) !== NODE_CATEGORY) return [];
      const nodeId = entityIdOf(recorded.stream);
      const command = (type: string, reason: string): WorkflowCommand[] => [
        { handler: NODE_WORK, entityId: nodeId, type, reason },
      ];
      switch (recorded.type) {
        case "NodeBecameUnhealthy":
          return query.holdsWork(nodeId) ? command(QUEUE_NODE_LOSS, `node ${nodeId} became UNHEALTHY`) : [];
        case "NodeBecameUnknown":
          return query.holdsWork(nodeId) ? command(QUEUE_NODE_LOSS, `node ${nodeId} became UNKNOWN`) : [];
        case "NodeRejected":
          return query.holdsWork(nodeId) ? command(LOSE_NODE_WORK, `node ${nodeId} was rejected`) : [];
        case "NodeDeleted":
          return query.holdsWork(nodeId) ? command(LOSE_NODE_WORK, `node ${nodeId} was deleted`) : [];
        case "NodeBecameHealthy":
        case "NodeApproved":
          return query.mayRunLostWork(nodeId)
            ? command(
                STOP_LOST_WORK,
                `node ${nodeId} is back (${recorded.type === "NodeApproved" ? "approved" : "HEALTHY"})`,
              )
            : [];
        default:
          return labelsMayHaveChanged(recorded.type, recorded.data) && query.holdsDaemonWork(nodeId)
            ? command(CHECK_DAEMON_MATCH, `node ${nodeId}'s labels changed`)
            : [];
      }
    },
  };
}
