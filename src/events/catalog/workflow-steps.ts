import { Schema } from "effect";

/**
 * What a workflow records in its stream `workflow-<name>` before it acts on an input event: the
 * input and the commands it issued for it, with their ids (docs/events.md, Workflow steps). The
 * fields are in the order they have always been stored in.
 */

/** The event a step reacted to: its id, stream, type and store position. */
export const WorkflowStepInput = Schema.Struct({
  EventID: Schema.NonEmptyString,
  Stream: Schema.NonEmptyString,
  Type: Schema.NonEmptyString,
  Position: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
});

/** One command of a step: its id (derived from the input event's), its handler, entity, type and why. */
export const WorkflowStepCommand = Schema.Struct({
  CommandID: Schema.NonEmptyString,
  Handler: Schema.NonEmptyString,
  EntityID: Schema.NonEmptyString,
  Type: Schema.NonEmptyString,
  Reason: Schema.String,
});

export const WorkflowStepRecorded = Schema.Struct({
  Workflow: Schema.NonEmptyString,
  Input: WorkflowStepInput,
  Commands: Schema.Array(WorkflowStepCommand),
});

export type WorkflowStep = typeof WorkflowStepRecorded.Type;

export const WORKFLOW_STEP_SCHEMAS = { WorkflowStepRecorded };

export type WorkflowStepType = keyof typeof WORKFLOW_STEP_SCHEMAS;
export const WORKFLOW_STEP_TYPES = Object.keys(WORKFLOW_STEP_SCHEMAS) as WorkflowStepType[];
export const WORKFLOW_STEP_EVENT = "WorkflowStepRecorded" satisfies WorkflowStepType;

export type WorkflowStepRecord = { readonly type: WorkflowStepType; readonly data: WorkflowStep };
