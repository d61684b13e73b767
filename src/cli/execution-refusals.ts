import { computeStateName, shortId } from "./job-cells.ts";
import type { ExecutionJson } from "./job-shapes.ts";
import { printable } from "./printable.ts";

/** The states in which a node said why it would not run, or stopped running, an execution. */
const REFUSED = new Set(["AskForBidRejected", "BidRejected", "Failed"]);

/**
 * Why each execution of a job ended without its work done, as the node said it (ComputeState.Message): the job's
 * message sums up its nodes; each execution's own reason (a path outside its node's allow-list, an image it cannot
 * pull, a command that failed) is what a user can act on. Oldest first, one line each.
 */
export function executionRefusals(executions: readonly ExecutionJson[]): string[] {
  return [...executions]
    .sort((a, b) => a.CreateTime - b.CreateTime)
    .filter((e) => REFUSED.has(computeStateName(e.ComputeState.StateType)) && e.ComputeState.Message !== "")
    .map((e) => {
      const state = computeStateName(e.ComputeState.StateType);
      return `Execution ${shortId(e.ID)} on node ${e.NodeID} ${state}: ${printable(e.ComputeState.Message)}`;
    });
}
