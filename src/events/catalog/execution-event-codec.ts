import { EXECUTION_CATEGORY } from "../streams.ts";
import { entityEvents } from "./entity-event-codec.ts";
import { EXECUTION_EVENT_SCHEMAS, type ExecutionEvent, type ExecutionEventType } from "./execution-events.ts";

/** Current schema version of each execution event type (see entityEventCodec for what a change takes). */
export const EXECUTION_EVENT_VERSIONS: Record<ExecutionEventType, number> = {
  ExecutionCreated: 1,
  ExecutionBidAsked: 1,
  ExecutionBidAccepted: 1,
  ExecutionBidDeclined: 1,
  ExecutionApproved: 1,
  ExecutionRejected: 1,
  ExecutionStarted: 1,
  ExecutionCompleted: 1,
  ExecutionFailed: 1,
  ExecutionCancelled: 1,
  ExecutionOutputKept: 1,
};

/** Execution events, registered in ENTITY_EVENTS (entity-events.ts). */
export const executionEvents = entityEvents<ExecutionEvent>({
  category: EXECUTION_CATEGORY,
  schemas: EXECUTION_EVENT_SCHEMAS,
  versions: EXECUTION_EVENT_VERSIONS,
});
const codec = executionEvents;

export const encodeExecutionEvent = codec.encode;
export const encodeExecutionEventBySchema = codec.encodeBySchema;
/** Validates a stored execution event against its schema; a store holding anything else is corrupt. */
export const decodeExecutionEvent = codec.decode;
export const isExecutionEventType = codec.isEventType;
