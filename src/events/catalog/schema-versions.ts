import { ENTITY_EVENTS } from "./entity-events.ts";
import { NODE_REACTION_RECORD_VERSIONS } from "./node-reaction-record-codec.ts";
import { WORKFLOW_STEP_VERSIONS } from "./workflow-step-codec.ts";

/**
 * The newest schema version of every entity event type (each registered kind's), of the workflows' step records and of
 * the node-reactions workflow's records, this Shoal reads: a store holding a newer one was written by a newer Shoal.
 * Other bookkeeping events are at version 1.
 */
export const SCHEMA_VERSIONS: Readonly<Record<string, number>> = Object.assign(
  {},
  ...ENTITY_EVENTS.map((events) => events.versions),
  NODE_REACTION_RECORD_VERSIONS,
  WORKFLOW_STEP_VERSIONS,
) as Readonly<Record<string, number>>;
