import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import type { JobState } from "../../machines/job/job-state.ts";
import { isTerminal } from "./execution-states.ts";
import { toExisting } from "./existing-execution.ts";
import type { ExecutionToCancel, FollowUp } from "./job-plan.ts";

/** Bacalhau's reason for an execution of an earlier version stopped (pkg/orchestrator/events.go). */
export const STOPPED_FOR_JOB_UPDATE = "Execution stopped for job update";

/**
 * Bacalhau's rate limiter (`BatchRateLimiter`): at most `maxPerEval` executions created, and at most as many running
 * ones of earlier versions stopped, per evaluation; the rest an evaluation `backoffMs` later. `maxPerEval` 0: no limit.
 */
export interface ExecutionRateLimit {
  readonly maxPerEval: number;
  readonly backoffMs: number;
}

/** Bacalhau's `MaxExecutionsPerEval` and `ExecutionLimitBackoff` (node.SystemConfig). */
export const DEFAULT_EXECUTION_RATE_LIMIT: ExecutionRateLimit = { maxPerEval: 20, backoffMs: 100 };

/** How many of `wanted` the limit lets one evaluation do (all of them without a limit). */
export const allowedNow = (limit: ExecutionRateLimit, wanted: number): number =>
  limit.maxPerEval > 0 ? Math.min(wanted, limit.maxPerEval) : wanted;

/** What one evaluation does with a job's executions of earlier versions. */
export interface OutdatedStops {
  /** Stopped now: every one not yet desired Running, and the first running ones the limit allows. */
  readonly cancel: readonly ExecutionToCancel[];
  /** Of those, the executions themselves (their capacity is free for this evaluation's placements). */
  readonly stopped: readonly ExecutionState[];
  /** Running ones left for a later evaluation: they keep their partition (batch, service) or node (ops, daemon). */
  readonly remaining: readonly ExecutionState[];
  /** When the next of `remaining` may be stopped. */
  readonly again?: FollowUp;
}

/**
 * A later version replaces the earlier ones' executions at a bounded rate, as Bacalhau's schedulers do
 * (handlePreviousVersionsExecutions): those not yet desired Running are stopped at once; running ones at most
 * `maxPerEval` at a time, oldest change first, and the next ones once `backoffMs` passed since the last were stopped.
 * The pause is read from the stopped executions themselves (when their stop was stored), not from which evaluation
 * this is: the evaluations an execution's end or a node's change bring in between stop nothing more, and a restart
 * goes on where the stored stops left off. Pure.
 */
export function outdatedStops(
  job: Pick<JobState, "version">,
  executions: readonly ExecutionState[],
  limit: ExecutionRateLimit,
  now: number,
): OutdatedStops {
  const earlier = executions.filter((e) => e.jobVersion < job.version && e.computeState !== undefined);
  const underWay = earlier.filter((e) => !isTerminal(toExisting(e)));
  const pending = underWay.filter((e) => e.desiredState !== "Running");
  const running = underWay
    .filter((e) => e.desiredState === "Running")
    .sort((a, b) => a.modifyTime - b.modifyTime || (a.executionId < b.executionId ? -1 : 1));
  const lastStop = latestUpdateStop(earlier);
  const pausedUntil = lastStop === undefined ? now : lastStop + limit.backoffMs;
  const count = limit.maxPerEval > 0 && now < pausedUntil ? 0 : allowedNow(limit, running.length);
  const stopped = [...pending, ...running.slice(0, count)];
  const remaining = running.slice(count);
  return {
    cancel: stopped.map((e) => ({ executionId: e.executionId, nodeId: e.nodeId, reason: STOPPED_FOR_JOB_UPDATE })),
    stopped,
    remaining,
    ...(remaining.length === 0
      ? {}
      : {
          again: {
            at: count > 0 ? now + limit.backoffMs : pausedUntil,
            reason:
              `${remaining.length} more executions of earlier versions to stop ` +
              `(at most ${limit.maxPerEval} per evaluation)`,
          },
        }),
  };
}

/** When an earlier version's execution was last stopped for an update (its stop's time), if ever. */
function latestUpdateStop(earlier: readonly ExecutionState[]): number | undefined {
  let latest: number | undefined;
  for (const e of earlier)
    if (e.desiredState === "Stopped" && e.desiredMessage === STOPPED_FOR_JOB_UPDATE)
      latest = Math.max(latest ?? e.modifyTime, e.modifyTime);
  return latest;
}
