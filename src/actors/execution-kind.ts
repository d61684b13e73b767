import { executionDecider } from "../../machines/execution/execution-decider.ts";
import type { ExecutionCommand, ExecutionRefusal } from "../../machines/execution/execution-commands.ts";
import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import { executionEvents } from "../events/catalog/execution-event-codec.ts";
import type { ExecutionEvent } from "../events/catalog/execution-events.ts";
import { conflict, notFound, type ShoalError } from "../errors/shoal-error.ts";
import { entityKind, type EntityKind } from "./entity-kind.ts";

function refusalError(refusal: ExecutionRefusal): ShoalError {
  switch (refusal.code) {
    case "NotFound":
      return notFound(refusal.message);
    case "Conflict":
      return conflict(refusal.message);
  }
}

export type ExecutionKind = EntityKind<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;

/** Executions as the generic actor host sees them. */
export const executionKind: ExecutionKind = entityKind(executionEvents, { decider: executionDecider, refusalError });
