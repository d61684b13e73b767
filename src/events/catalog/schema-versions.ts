import { EXECUTION_EVENT_VERSIONS } from "./execution-event-codec.ts";
import { JOB_EVENT_VERSIONS } from "./job-event-codec.ts";
import { NODE_EVENT_VERSIONS } from "./node-event-codec.ts";
import { NODE_REACTION_RECORD_VERSIONS } from "./node-reaction-record-codec.ts";
import { WORKFLOW_STEP_VERSIONS } from "./workflow-step-codec.ts";

/**
 * The newest schema version of every entity event type, of the workflows' step records and of the
 * node-reactions workflow's records, this Shoal reads: a store holding a newer one was written by a
 * newer Shoal. Other bookkeeping events are at version 1.
 */
export const SCHEMA_VERSIONS: Readonly<Record<string, number>> = {
  ...NODE_EVENT_VERSIONS,
  ...JOB_EVENT_VERSIONS,
  ...EXECUTION_EVENT_VERSIONS,
  ...NODE_REACTION_RECORD_VERSIONS,
  ...WORKFLOW_STEP_VERSIONS,
};
