import type { ExecutionState } from "../execution/execution-state.ts";
import type { DrainLeftover } from "../node/node-commands.ts";
import type { NodeDrain } from "../node/node-state.ts";
import { drainDeadlineAt } from "./drain-under-way.ts";

/**
 * What the drain's deadline does when it fires: nothing yet when the drain was drained again with a later deadline
 * (`later`: arm that one), else the drain expires naming what is left (kept daemon work aside), and the drain flow
 * stops each of them.
 */
export type DrainDeadlineOutcome =
  | { readonly type: "later"; readonly at: number }
  | { readonly type: "expire"; readonly left: readonly DrainLeftover[]; readonly reason: string };

/** The drain under way at its deadline; `executions`: those under way on the node, as their actors have them. */
export function drainDeadline(
  drain: NodeDrain,
  executions: readonly ExecutionState[],
  now: number,
): DrainDeadlineOutcome {
  const at = drainDeadlineAt(drain);
  if (at > now) return { type: "later", at };
  const left: DrainLeftover[] = executions
    .filter((e) => !(e.jobType === "daemon" && drain.keepDaemon))
    .map((e) => ({ executionId: e.executionId, jobId: e.jobId, jobType: e.jobType ?? "batch" }));
  const reason = `the drain deadline ${drain.deadline} passed with ${left.length} execution${left.length === 1 ? "" : "s"} left`;
  return { type: "expire", left, reason };
}
