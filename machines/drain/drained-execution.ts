import type { ExecutionState } from "../execution/execution-state.ts";

/** One execution under way on a draining node, with what the host found out about it for a pass. */
export interface DrainedExecution {
  readonly execution: ExecutionState;
  /**
   * Batch: whether another node would take its partition now (the host's dry run of placement with it leaving,
   * JobRunner.placeableElsewhere). Absent reads as no.
   */
  readonly placeableElsewhere?: boolean;
  /** Service: another execution of its partition, under way on another node (its replacement), if there is one. */
  readonly replacement?: ExecutionState;
}

/** An execution a drain stops, and why (the reason on its Cancel and on the command's context). */
export interface DrainCancel {
  readonly execution: ExecutionState;
  readonly reason: string;
}
