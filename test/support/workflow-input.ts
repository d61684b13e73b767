import type { DomainEvent } from "../../src/projections/event-envelope.ts";
import { workflowInputOf, type WorkflowInput } from "../../src/workflows/workflow-input.ts";
import { envelopeOf } from "./recorded-event.ts";

/**
 * What a workflow host hands a workflow for `event` stored on `stream`: encoded by its kind's codec, decoded back
 * through the processors' envelope.
 */
export function workflowInput(stream: string, event: DomainEvent, position = 1): WorkflowInput {
  const input = workflowInputOf(envelopeOf(stream, event, position));
  if (input === undefined) throw new Error(`${stream} is no entity's stream: it holds no workflow's input`);
  return input;
}
