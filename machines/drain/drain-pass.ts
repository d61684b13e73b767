import type { ExecutionState } from "../execution/execution-state.ts";
import type { NodeDrain } from "../node/node-state.ts";
import type { DrainCancel, DrainedExecution } from "./drained-execution.ts";

/** What a pass over a draining node is given: its drain and the executions under way on it, in the host's order. */
export interface DrainPassInput {
  readonly nodeId: string;
  /** The drain under way (drainUnderWay): a pass is for a draining node only. */
  readonly drain: NodeDrain;
  readonly executions: readonly DrainedExecution[];
}

/** A service job whose partition on the draining node needs a replacement placed on another node. */
export interface DrainPlacement {
  readonly jobId: string;
  readonly reason: string;
}

/**
 * What one pass does, in this order: `cancel` (batch work that has somewhere to go, service originals whose
 * replacement runs), then `place` (one placement per service job still without a replacement). When nothing is
 * `left` it then stops `daemons` (their message is the jobs workflow's: job-outcome.ts reads it) and the drain
 * completes with `complete` as its reason; otherwise the drain waits for the next pass.
 */
export interface DrainPlan {
  readonly cancel: readonly DrainCancel[];
  readonly place: readonly DrainPlacement[];
  /** How many executions keep the drain from its end: ops, batch with nowhere to go, services not replaced yet. */
  readonly left: number;
  /** Set when nothing is left: the drain ends now. */
  readonly end?: { readonly daemons: readonly ExecutionState[]; readonly complete: string };
}

/**
 * One pass of a drain (docs/nodes.md, Drain): batch work moves when another node can take it and otherwise runs on;
 * a service's replacement is placed while the original runs, and the original stops once the replacement is Running;
 * ops work is left to finish; daemon work stops last, once nothing else is left, unless KeepDaemon. Only what is due
 * now: an execution ended meanwhile is not in the input, so a repeated pass acts on nothing twice.
 */
export function drainPass({ nodeId, drain, executions }: DrainPassInput): DrainPlan {
  const cancel: DrainCancel[] = [];
  const toPlace = new Set<string>();
  const daemons: ExecutionState[] = [];
  let left = 0;
  for (const { execution: e, placeableElsewhere, replacement } of executions) {
    switch (e.jobType) {
      case "batch":
        // No node to take it: it runs on here (to its end, or the deadline) rather than its job failing for want of
        // one; a later pass tries again.
        if (placeableElsewhere === true)
          cancel.push({
            execution: e,
            reason: `node ${nodeId} is draining: the execution is stopped and its partition placed on another node`,
          });
        else left++;
        break;
      case "service":
        if (replacement === undefined) toPlace.add(e.jobId);
        if (replacement?.computeState === "Running")
          cancel.push({
            execution: e,
            reason: `node ${nodeId} is draining: replaced by ${replacement.executionId} on node ${replacement.nodeId}, which is running`,
          });
        else left++;
        break;
      case "daemon":
        if (!drain.keepDaemon) daemons.push(e);
        break;
      default:
        // ops: let finish.
        left++;
    }
  }
  const place = [...toPlace].map((jobId) => ({
    jobId,
    reason: `node ${nodeId} is draining: a replacement starts before its execution stops`,
  }));
  if (left > 0) return { cancel, place, left };
  return { cancel, place, left, end: { daemons, complete: "nothing the drain had to move is left on the node" } };
}

/**
 * How many daemon executions of the node the drain stopped: those cancelled since it started (given every daemon
 * execution the node had, as their actors have them after the pass stopped its own).
 */
export function daemonsStopped(drain: NodeDrain, daemonExecutions: readonly ExecutionState[]): number {
  const since = Date.parse(drain.startedAt);
  return daemonExecutions.filter((e) => e.computeState === "Cancelled" && e.modifyTime >= since).length;
}
