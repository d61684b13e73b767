import type { Decider } from "../decider.ts";
import type { ExecutionEvent } from "../../src/events/catalog/execution-events.ts";
import { decideExecution } from "./decide-execution.ts";
import { evolveExecution } from "./evolve-execution.ts";
import type { ExecutionCommand, ExecutionRefusal } from "./execution-commands.ts";
import { executionDeadlines } from "./execution-deadlines.ts";
import { initialExecutionState, type ExecutionState } from "./execution-state.ts";

/** An execution's rules as the generic actor host and the read model take them. */
export const executionDecider: Decider<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal> = {
  initialState: initialExecutionState,
  decide: (command, state, meta) => decideExecution(command, state, meta.now),
  evolve: evolveExecution,
  deadlines: executionDeadlines,
};
