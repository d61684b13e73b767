import type { ReactionRecord } from "../../../machines/reactions/reaction-records.ts";
import { decodeNodeReactionRecord, isNodeReactionRecordType } from "../../events/catalog/node-reaction-record-codec.ts";
import { decodeWorkflowStep, isWorkflowStepType } from "../../events/catalog/workflow-step-codec.ts";
import type { RecordedEvent } from "../../events/store/event-store.ts";

/**
 * A record of `workflow-node-reactions` as the queue's fold reads it: the workflow's steps and the
 * reactions' own records, decoded through the event catalog (a record its schema rejects throws
 * CorruptEventError naming the stream, revision and field: a queue is never folded from damaged
 * data); undefined for anything else.
 */
export function storedReactionRecord(recorded: RecordedEvent): ReactionRecord | undefined {
  const { id, type, metadata } = recorded;
  const at = Date.parse(recorded.time);
  if (isNodeReactionRecordType(type)) return { id, metadata, at, ...decodeNodeReactionRecord(recorded) };
  if (isWorkflowStepType(type)) return { id, metadata, at, type, data: decodeWorkflowStep(recorded) };
  return undefined;
}
