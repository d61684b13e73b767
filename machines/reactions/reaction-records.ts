import type { NodeReactionRecord } from "../../src/events/catalog/node-reaction-records.ts";
import type { WorkflowStepRecord } from "../../src/events/catalog/workflow-steps.ts";
import { LOSE_NODE_WORK, QUEUE_NODE_LOSS, STOP_LOST_WORK } from "./reaction-commands.ts";
import type { ReactionEvent, StoredReactionEvent } from "./reaction-events.ts";

/** One command of a recorded step, as the host hands it over or as the step stores it. */
export interface StepCommand {
  readonly commandId: string;
  readonly type: string;
  readonly entityId: string;
  readonly reason: string;
}

/**
 * What a recorded step's command changes in the queue: QueueNodeLoss queues the node; LoseNodeWork
 * (lost at once) and StopLostWork (back) end its wait. The host applies these once the step is
 * recorded, and a restart folds the same from the stored step: the queue is the step's record.
 */
export function stepReactionEvents(
  command: StepCommand,
  causationId: string,
  correlationId: string,
): readonly ReactionEvent[] {
  switch (command.type) {
    case QUEUE_NODE_LOSS:
      return [
        {
          type: "NodeLossQueued",
          nodeId: command.entityId,
          reason: command.reason,
          causationId,
          correlationId,
          queuedBy: command.commandId,
        },
      ];
    case LOSE_NODE_WORK:
    case STOP_LOST_WORK:
      return [{ type: "NodeLossWithdrawn", nodeId: command.entityId, standing: undefined }];
    default:
      return [];
  }
}

/** A stored record of the workflow's stream, a step or one of the reactions' own, decoded through the event catalog. */
export type ReactionRecord = {
  readonly id: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** When it was recorded, in ms. */
  readonly at: number;
} & (NodeReactionRecord | WorkflowStepRecord);

/** The record a stored reaction event is kept as (its type is the event's). */
export function reactionRecordOf(event: StoredReactionEvent): NodeReactionRecord {
  switch (event.type) {
    case "NodeLossQueued":
      return { type: event.type, data: { NodeID: event.nodeId, Reason: event.reason } };
    case "NodeLossReleased":
      return { type: event.type, data: { NodeID: event.nodeId, Health: event.health, Tokens: event.tokens } };
    case "NodeLossWithdrawn":
      return { type: event.type, data: { NodeID: event.nodeId, Standing: event.standing ?? null } };
  }
}

/** What one record of the workflow's stream changes in the queue: the fold a restart rebuilds it with. */
export function reactionEventsOf(record: ReactionRecord): readonly ReactionEvent[] {
  switch (record.type) {
    case "WorkflowStepRecorded": {
      const step = record.data;
      const causationId = step.Input.EventID;
      const correlation = record.metadata.correlationId;
      const correlationId = typeof correlation === "string" ? correlation : causationId;
      return step.Commands.flatMap((c) =>
        stepReactionEvents(
          { commandId: c.CommandID, type: c.Type, entityId: c.EntityID, reason: c.Reason },
          causationId,
          correlationId,
        ),
      );
    }
    case "NodeLossQueued": {
      const d = record.data;
      return [
        {
          type: "NodeLossQueued",
          nodeId: d.NodeID,
          reason: d.Reason,
          causationId: "",
          correlationId: "",
          queuedBy: record.id,
        },
      ];
    }
    case "NodeLossReleased": {
      const d = record.data;
      return [
        {
          type: "NodeLossReleased",
          nodeId: d.NodeID,
          health: d.Health,
          tokens: d.Tokens,
          at: record.at,
        },
      ];
    }
    case "NodeLossWithdrawn": {
      const d = record.data;
      return [{ type: "NodeLossWithdrawn", nodeId: d.NodeID, standing: d.Standing ?? undefined }];
    }
  }
}
