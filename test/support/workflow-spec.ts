import { expect } from "vitest";
import type { EventEnvelope } from "../../src/projections/event-envelope.ts";
import type { Workflow, WorkflowCommand } from "../../src/workflows/workflow.ts";
import { workflowInputOf } from "../../src/workflows/workflow-input.ts";

/**
 * Workflow tests as specifications: given(the workflow, built on what it asks of the cluster).when(the envelope the
 * processor host hands over).then(its commands), or .thenThrows(what stops the step). The envelope reaches the
 * workflow as the host passes it (workflowInputOf): an envelope of no entity's event calls for nothing.
 */
export function workflowSpec(workflow: Workflow) {
  return {
    when(envelope: EventEnvelope) {
      const react = (): readonly WorkflowCommand[] => {
        const input = workflowInputOf(envelope);
        return input === undefined ? [] : workflow.react(input);
      };
      return {
        /** Exactly these commands, in this order. */
        then(expected: readonly WorkflowCommand[]): void {
          expect(react()).toEqual(expected);
        },
        /** The step stops with this error, whose message matches `message`. */
        thenThrows(error: abstract new (...args: never[]) => Error, message: RegExp): void {
          expect(react).toThrow(error);
          expect(react).toThrow(message);
        },
      };
    },
  };
}
