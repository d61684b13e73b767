import type { NewEvent, RecordedEvent } from "../store/event-store.ts";
import { entityEventCodec } from "./entity-event-codec.ts";
import type { EventMetadata } from "./event-metadata.ts";
import {
  WORKFLOW_STEP_EVENT,
  WORKFLOW_STEP_SCHEMAS,
  type WorkflowStep,
  type WorkflowStepRecord,
  type WorkflowStepType,
} from "./workflow-steps.ts";

/** Current schema version of a workflow's step record (see entityEventCodec for what a change takes). */
export const WORKFLOW_STEP_VERSIONS: Record<WorkflowStepType, number> = { WorkflowStepRecorded: 1 };

const codec = entityEventCodec<WorkflowStepRecord>("workflow", WORKFLOW_STEP_SCHEMAS, WORKFLOW_STEP_VERSIONS);

/**
 * A step as it is appended, data and metadata checked as a reader will check them (InvalidEventError naming the field
 * otherwise), at its catalog version.
 */
export const encodeWorkflowStep = (
  step: WorkflowStep,
  metadata: Omit<EventMetadata, "schemaVersion">,
  id: string,
): NewEvent => codec.encode({ type: WORKFLOW_STEP_EVENT, data: step }, metadata, id);

/**
 * A stored step, checked against its schema and version: a workflow stream holding anything else under this type is
 * corrupt (CorruptEventError naming the stream, revision and field).
 */
export const decodeWorkflowStep = (recorded: RecordedEvent): WorkflowStep => codec.decode(recorded).data;

export const isWorkflowStepType = codec.isEventType;
