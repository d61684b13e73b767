import { JOB_CATEGORY } from "../streams.ts";
import { entityEvents } from "./entity-event-codec.ts";
import { JOB_EVENT_SCHEMAS, type JobEvent, type JobEventType } from "./job-events.ts";

/** Current schema version of each job event type (see entityEventCodec for what a change takes). */
export const JOB_EVENT_VERSIONS: Record<JobEventType, number> = {
  JobSubmitted: 1,
  JobQueued: 1,
  JobStarted: 1,
  JobCompleted: 1,
  JobFailed: 1,
  JobStopped: 1,
  JobUpdated: 1,
  JobRerun: 1,
  JobUpdateHeld: 1,
  JobUpdateResumed: 1,
};

/** Job events, registered in ENTITY_EVENTS (entity-events.ts). */
export const jobEvents = entityEvents<JobEvent>({
  category: JOB_CATEGORY,
  schemas: JOB_EVENT_SCHEMAS,
  versions: JOB_EVENT_VERSIONS,
});
const codec = jobEvents;

export const encodeJobEvent = codec.encode;
export const encodeJobEventBySchema = codec.encodeBySchema;
/** Validates a stored job event against its schema; a store holding anything else is corrupt. */
export const decodeJobEvent = codec.decode;
export const isJobEventType = codec.isEventType;
