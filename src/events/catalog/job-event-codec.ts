import { entityEventCodec } from "./entity-event-codec.ts";
import { JOB_EVENT_SCHEMAS, type JobEvent, type JobEventType } from "./job-events.ts";

/** Current schema version of each job event type (see entityEventCodec for what a change takes). */
export const JOB_EVENT_VERSIONS: Record<JobEventType, number> = {
  JobSubmitted: 1,
  JobQueued: 1,
  JobStarted: 1,
  JobCompleted: 1,
  JobFailed: 1,
  JobStopped: 1,
};

const codec = entityEventCodec<JobEvent>("job", JOB_EVENT_SCHEMAS, JOB_EVENT_VERSIONS);

export const encodeJobEvent = codec.encode;
export const encodeJobEventBySchema = codec.encodeBySchema;
/** Validates a stored job event against its schema; a store holding anything else is corrupt. */
export const decodeJobEvent = codec.decode;
export const isJobEventType = codec.isEventType;
