import type { WorkflowInput } from "./workflow-input.ts";

/**
 * A command a workflow issues: to whom (a handler the host knows by name, and the entity id),
 * what, and why. Its id is derived from the workflow and the input event, never random, so a
 * replayed input issues the very same command.
 */
export interface WorkflowCommand {
  readonly handler: string;
  readonly entityId: string;
  readonly type: string;
  readonly reason: string;
}

/**
 * A process manager: when this happens, do that. `react` is pure — from one entity's event, typed
 * by its kind's codec, to the commands it calls for (none for most events) — and the host records
 * both before it acts. Commands must be idempotent where they land (a second delivery after a
 * crash changes nothing).
 */
export interface Workflow {
  readonly name: string;
  react(input: WorkflowInput): readonly WorkflowCommand[];
}

/** A command as its handler gets it: with its own id, and the input event as its cause. */
export type IssuedCommand = WorkflowCommand & {
  readonly commandId: string;
  readonly causationId: string;
  readonly correlationId: string;
  /** The input event's store position (absent outside a workflow step): the position a read model must reach. */
  readonly causationPosition?: number;
};

/** Carries out one kind of workflow command; resolves once it is done. */
export type WorkflowHandler = (command: IssuedCommand) => Promise<void> | void;
