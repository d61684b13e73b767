import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import { isLongRunning, taskOf } from "../../machines/job/job-spec.ts";
import { isTerminalJobState, type JobState } from "../../machines/job/job-state.ts";
import { parseTaskResources } from "../../machines/job/task-resources.ts";
import { deterministicId } from "../events/store/deterministic-id.ts";
import { release, type CapacityLedger } from "./capacity-ledger.ts";
import { isTerminal } from "./execution-states.ts";
import { allocationOf, holdsCapacity } from "./holds-capacity.ts";
import { failureOf } from "./execution-failure.ts";
import { toExisting } from "./existing-execution.ts";
import { EXECUTIONS_FAILED_MESSAGE, attemptOf, jobOutcome, releasesNode, wantsPlacement } from "./job-outcome.ts";
import {
  EMPTY_PLAN,
  type ExecutionToCreate,
  type FollowUp,
  type JobPlan,
  type JobPlanCommand,
  type PlacementPlan,
  type PlanLog,
} from "./job-plan.ts";
import {
  DEFAULT_EXECUTION_RATE_LIMIT,
  outdatedStops,
  type ExecutionRateLimit,
  type OutdatedStops,
} from "./outdated-executions.ts";
import { placeJob, remainingPartitionCount, type PlacementResult } from "./place-job.ts";
import type { ExistingExecution, JobType, PlacementRequest } from "./placement-request.ts";

/**
 * Seconds the orchestrator allows past an ExecutionTimeout before failing the execution itself (the node enforces it
 * first).
 */
export const TIMEOUT_BUFFER_SECONDS = 60;

/** What one evaluation of a job reads: all of it read beforehand, so that deciding does no I/O. */
export interface JobEvaluation {
  readonly job: Pick<JobState, "jobId" | "spec" | "state" | "version" | "versionTime"> &
    Partial<Pick<JobState, "heldReason">>;
  /**
   * Its current version's executions as their actors hold them: those the job read model shows, once it folded what
   * came before.
   */
  readonly executions: readonly ExecutionState[];
  /** Its earlier versions' executions, the same way: replaced at the rate limit's pace (outdatedStops). */
  readonly earlier?: readonly ExecutionState[];
  /** At most how many executions one evaluation creates, and stops of earlier versions; else Bacalhau's 20 / 100 ms. */
  readonly rateLimit?: ExecutionRateLimit;
  /** Of those, the ids of a service's executions on a draining node: they hold no partition, and are replaced. */
  readonly leaving: ReadonlySet<string>;
  /**
   * The placement request for the job given its executions as placement counts them: the candidate nodes and the queue
   * policy at `now` (JobRunner's `requestFor`). Asked only when the job wants placing.
   */
  readonly requestFor: (executions: readonly ExistingExecution[]) => PlacementRequest;
  /** The capacity held before this evaluation. */
  readonly ledger: CapacityLedger;
  readonly now: number;
  /** How long a node may leave an execution's work unanswered, recorded on each new one; else the decider's default. */
  readonly answerTimeoutMs?: number;
  /** Why today's limits refuse the stored job: it fails with that, never placed. */
  readonly refusal?: string;
}

/**
 * Bacalhau's evaluation of one job, as its schedulers for v1.7 do it: place what is missing (a first placement, a
 * failed partition's retry, a top-up of a job placed in part, a new node for an ops or daemon job, a replacement for
 * a service's execution leaving a draining node), then judge the job by its executions. Every new execution's id comes
 * from the job, the partition (ops, daemon: the node) and how many executions that partition already had, so a retry
 * gets a new id and a replayed evaluation the same. Pure: throws only for the job's own data (placeJob's
 * PlacementInputError, a spec the request cannot be built from).
 *
 * An update whose new version waits for room is held (HoldUpdate, with the shortfall's reason); the first evaluation
 * that no longer waits resumes it, unless the job queues, fails or completes instead (each says its own message).
 */
export function evaluateJob(input: JobEvaluation): PlacementPlan {
  const plan = placementPlan(input);
  if ((input.job.heldReason ?? "") === "" || plan.job.some((c) => c.type !== "Run")) return plan;
  return { ...plan, job: [{ type: "ResumeUpdate" }, ...plan.job] };
}

function placementPlan(input: JobEvaluation): PlacementPlan {
  const { job, executions } = input;
  const spec = job.spec;
  if (spec === undefined || job.state === undefined || isTerminalJobState(job.state))
    return { ...EMPTY_PLAN, ledger: input.ledger };
  if (input.refusal !== undefined)
    return { ...EMPTY_PLAN, ledger: input.ledger, job: [{ type: "Fail", reason: input.refusal }] };
  const limit = input.rateLimit ?? DEFAULT_EXECUTION_RATE_LIMIT;
  // An earlier version's executions stopped now give their capacity to this evaluation's placements (a daemon's node
  // gets its new execution in the same pass); those still running keep their partition or node until their turn.
  const stops = outdatedStops(job, input.earlier ?? [], limit, input.now);
  const task = taskOf(spec);
  const counted = executions.map((e) =>
    input.leaving.has(e.executionId) ? { ...toExisting(e), leaving: true } : toExisting(e),
  );
  const before = jobOutcome(spec.Type, spec.Count, counted);
  // The current version holds every partition (or completed): the earlier versions' executions are stopped as paced.
  if (!wantsPlacement(spec.Type, spec.Count, counted) || (before.kind === "completed" && spec.Type === "batch")) {
    const freed = stops.stopped.filter(holdsCapacity).map(allocationOf);
    const ledger = freed.length === 0 ? input.ledger : release(input.ledger, freed);
    const done: JobPlanCommand[] = before.kind === "completed" && spec.Type === "batch" ? [{ type: "Complete" }] : [];
    return { ...EMPTY_PLAN, ...replacingPlan(job.jobId, stops), ledger, job: done };
  }
  const all = executions.map(toExisting);
  // A daemon's execution lost with its node, or stopped as the node stopped matching, leaves the node free for another.
  const current =
    spec.Type === "daemon"
      ? counted.filter((e, i) => !(isTerminal(e) && releasesNode((executions[i] as ExecutionState).computeMessage)))
      : counted;
  // Bacalhau's rate limiter: at most MaxExecutionsPerEval new executions per evaluation, the rest an evaluation later.
  const maxPlacements = limit.maxPerEval > 0 ? limit.maxPerEval : undefined;
  const attempt = (taken: OutdatedStops): Attempt => {
    const freedNow = taken.stopped.filter(holdsCapacity).map(allocationOf);
    const from = freedNow.length === 0 ? input.ledger : release(input.ledger, freedNow);
    const holding = taken.remaining.length === 0 ? current : [...current, ...taken.remaining.map(toExisting)];
    const placing = placeJob({ ...input.requestFor(holding), ...(maxPlacements ? { maxPlacements } : {}) }, from);
    return { stops: taken, result: placing };
  };
  const partitioned = spec.Type === "batch" || spec.Type === "service";
  const retry = {
    at: input.now + limit.backoffMs,
    reason: "executions of earlier versions to stop once their replacements are placed",
  };
  const chosen = partitioned ? replacedInStep(stops, attempt, retry) : { ...attempt(stops), blocked: false };
  const earlierRunning = chosen.stops.remaining.map(toExisting);
  const replacing = replacingPlan(job.jobId, chosen.stops);
  // Only replacements for executions leaving a draining node are missing: a shortfall leaves them running, it never
  // fails the job.
  const replacingOnly = partitioned && remainingPartitionCount(spec.Type, spec.Count, [...all, ...earlierRunning]) < 1;
  const result = chosen.result;
  const kept = result.placements;
  const deferred = result.deferred ?? 0;
  const timeout = isLongRunning(spec.Type) ? 0 : task.Timeouts.ExecutionTimeout || task.Timeouts.TotalTimeout;
  const allocated = parseTaskResources(task.Resources);
  const create = kept.map((p): ExecutionToCreate => {
    const attempt = attemptOf(spec.Type, all, p);
    const key = p.partitionIndex === undefined ? p.nodeId : String(p.partitionIndex);
    // A later version's executions are its own: never the id of an earlier version's attempt.
    const version = job.version > 1 ? [`v${job.version}`] : [];
    const executionId = `e-${deterministicId("placement", job.jobId, key, String(attempt), ...version)}`;
    const previous = p.partitionIndex === undefined ? undefined : latestOfPartition(executions, p.partitionIndex);
    const partition = p.partitionIndex ?? 0;
    return {
      executionId,
      command: {
        type: "Create",
        jobId: job.jobId,
        namespace: spec.Namespace,
        nodeId: p.nodeId,
        jobType: spec.Type,
        jobVersion: job.version,
        partitionIndex: partition,
        resources: allocated,
        executionTimeout: timeout,
        timeoutBuffer: TIMEOUT_BUFFER_SECONDS,
        ...(previous === undefined ? {} : { previousExecution: previous.executionId }),
        ...(input.answerTimeoutMs === undefined ? {} : { answerTimeoutMs: input.answerTimeoutMs }),
      },
      ...(previous === undefined
        ? {}
        : {
            reason: isTerminal(toExisting(previous))
              ? retryReason(previous, partition)
              : replacementReason(previous, partition),
          }),
    };
  });
  const moreToPlace =
    deferred > 0
      ? {
          at: input.now + limit.backoffMs,
          reason: `${deferred} more executions to place (at most ${limit.maxPerEval} per evaluation)`,
        }
      : undefined;
  const again = earliest(moreToPlace, replacing.again);
  const placed: Omit<PlacementPlan, "job"> = {
    create,
    cancel: replacing.cancel,
    ledger: result.ledger,
    log: [...replacing.log, placedLog(job.jobId, result.decision, kept, deferred)],
    ...(again === undefined ? {} : { again }),
  };
  // A job that had executions fail: its shortfall says which failed last, and why.
  const last = latestFailure(executions);
  const message =
    (result.message ?? ("why" in chosen ? chosen.why : undefined) ?? "the job cannot be placed") +
    (last === undefined ? "" : `\nLast failure: ${failureOf(last)}`);
  if (replacingOnly && kept.length === 0 && result.decision !== "placed") {
    const waits: PlanLog = {
      level: "info",
      fields: { jobId: job.jobId, message },
      message: "no node for a draining node's replacement yet: the original runs on",
    };
    return { ...placed, job: [], log: [...placed.log, waits] };
  }
  // An update never turns a shortfall into an outage: while an earlier version's executions run, the job waits for
  // room for its new version (a node's change evaluates it again, as a queued job's does) rather than failing. The
  // job says so (its decider records the reason when it changes).
  if (earlierRunning.length > 0 && (chosen.blocked || (result.decision !== "placed" && result.shortfall))) {
    const waits: PlanLog = {
      level: "info",
      fields: { jobId: job.jobId, version: job.version, left: earlierRunning.length, message },
      message: `waiting for room for version ${job.version}: the earlier version's executions run on`,
    };
    return { ...placed, job: [{ type: "HoldUpdate", reason: message }], log: [...placed.log, waits] };
  }
  if (result.decision === "failed") return { ...placed, job: [{ type: "Fail", reason: message }] };
  // Bacalhau: a job runs once it has an execution desired Running: an ops or daemon one at once, a batch or service one
  // at its bid's approval.
  const commands: JobPlanCommand[] = [];
  if (result.decision === "queued" && result.jobQueued === true) {
    const wanted = result.shortfall?.requested;
    commands.push({ type: "Queue", reason: message, ...(wanted === undefined ? {} : { wanted }) });
  } else if (kept.length > 0 && !asksForBids(spec.Type)) commands.push({ type: "Run" });
  // An ops job that placed nothing new is judged by its executions: done once none is left under way, an earlier
  // version's still running included (Bacalhau's ops scheduler counts them as under way).
  if (spec.Type === "ops" && kept.length === 0 && earlierRunning.length === 0)
    commands.push(...opsOutcome(spec.Count, executions));
  // Placed in part: the rest waits for QueueBackoff or a node's gain, and is judged again when the QueueTimeout passes
  // (just past it: at the instant itself the job may still wait), counted from the version's start as the job's own
  // deadlines are (machines/job/job-deadlines.ts).
  const topUp =
    result.decision === "queued" && result.jobQueued !== true
      ? {
          at: Math.max(input.now, job.versionTime + task.Timeouts.QueueTimeout * 1000) + 1,
          reason: "the queue timeout of a job placed in part passed",
        }
      : undefined;
  return { ...placed, job: commands, ...(topUp === undefined ? {} : { topUp }) };
}

/** The part of a plan that replaces an earlier version's executions: its cancels, its log line, its follow-up. */
function replacingPlan(jobId: string, stops: OutdatedStops): Pick<JobPlan, "cancel" | "log" | "again"> {
  if (stops.cancel.length === 0 && stops.remaining.length === 0) return { cancel: [], log: [] };
  const line: PlanLog = {
    level: "info",
    fields: { jobId, stopped: stops.cancel.map((c) => c.executionId), left: stops.remaining.length },
    message: "executions of earlier versions stopped for the job's update",
  };
  return { cancel: stops.cancel, log: [line], ...(stops.again === undefined ? {} : { again: stops.again }) };
}

/** One way to carry out an evaluation's stops: those it stops, and where its placements then go. */
interface Attempt {
  readonly stops: OutdatedStops;
  readonly result: PlacementResult;
}

/**
 * A batch or service partition's earlier execution is stopped only when its replacement is placed in the same pass:
 * of the running ones the rate limit would stop now, the longest prefix (oldest change first) whose partitions all get
 * a new execution; the others run on. `blocked` when some lack a node: the new version waits for room. All
 * of them fit in the common case (one placement); otherwise a bisection, a placement per step.
 */
function replacedInStep(
  stops: OutdatedStops,
  attempt: (stops: OutdatedStops) => Attempt,
  retry: FollowUp,
): Attempt & { readonly blocked: boolean; readonly why?: string } {
  const running = stops.stopped.filter((e) => e.desiredState === "Running");
  const full = attempt(stops);
  if (running.every((e) => replacedBy(full.result, e))) return { ...full, blocked: false };
  const prefix = (n: number): OutdatedStops => {
    const kept = new Set(running.slice(n).map((e) => e.executionId));
    const stopped = stops.stopped.filter((e) => !kept.has(e.executionId));
    const remaining = [...running.slice(n), ...stops.remaining];
    const cancel = stops.cancel.filter((c) => !kept.has(c.executionId));
    // Short of nodes: a node's change, not the backoff, brings the next try (as for a queued job); held back by the
    // limit alone, the next evaluation does.
    const again = full.result.shortfall === undefined ? (stops.again ?? retry) : n === 0 ? undefined : stops.again;
    return { cancel, stopped, remaining, ...(again === undefined ? {} : { again }) };
  };
  let best = attempt(prefix(0));
  let lo = 1;
  let hi = running.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const tried = attempt(prefix(mid));
    if (running.slice(0, mid).every((e) => replacedBy(tried.result, e))) {
      best = tried;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const blocked = full.result.shortfall !== undefined;
  return { ...best, blocked, ...(full.result.message === undefined ? {} : { why: full.result.message }) };
}

/** Whether a placement replaces this earlier execution: a new execution for its partition. */
const replacedBy = (result: PlacementResult, e: ExecutionState): boolean =>
  result.placements.some((p) => p.partitionIndex === e.partitionIndex);

/** The sooner of two follow-ups (one evaluation does both), with both reasons. */
function earliest(a: FollowUp | undefined, b: FollowUp | undefined): FollowUp | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return { at: Math.min(a.at, b.at), reason: `${a.reason}; ${b.reason}` };
}

/** Every node gain and execution end evaluates the ops and daemon jobs again: only what changed is worth a line. */
function placedLog(
  jobId: string,
  decision: string,
  kept: readonly { readonly nodeId: string }[],
  deferred: number,
): PlanLog {
  return {
    level: kept.length > 0 || decision !== "placed" ? "info" : "debug",
    fields: { jobId, decision, placements: kept.map((p) => p.nodeId), deferred },
    message: "job placed",
  };
}

/** Bacalhau's ops scheduler: Complete once every execution ended and none failed, Fail naming a failed one. */
function opsOutcome(count: number, executions: readonly ExecutionState[]): JobPlanCommand[] {
  const outcome = jobOutcome("ops", count, executions.map(toExisting));
  if (outcome.kind === "completed") return [{ type: "Complete" }];
  if (outcome.kind !== "failed") return [];
  const failed = executions.find((e) => e.executionId === outcome.failed.id) as ExecutionState;
  return [{ type: "Fail", reason: `${EXECUTIONS_FAILED_MESSAGE}: ${failureOf(failed)}` }];
}

/**
 * Batch and service executions wait for their node's bid and its approval (Bacalhau v1.7); ops and daemon ones bid
 * directly.
 */
const asksForBids = (type: JobType): boolean => type === "batch" || type === "service";

/** The failed execution that ended last (by its last change), if any. */
function latestFailure(executions: readonly ExecutionState[]): ExecutionState | undefined {
  let latest: ExecutionState | undefined;
  for (const e of executions)
    if (e.computeState === "Failed" && (latest === undefined || e.modifyTime >= latest.modifyTime)) latest = e;
  return latest;
}

/** The newest execution a partition had: what a new execution for it replaces (Bacalhau's PreviousExecution). */
function latestOfPartition(executions: readonly ExecutionState[], partition: number): ExecutionState | undefined {
  let latest: ExecutionState | undefined;
  for (const e of executions)
    if (e.partitionIndex === partition && (latest === undefined || e.createTime >= latest.createTime)) latest = e;
  return latest;
}

/** Why a partition gets a second execution while its first still runs: its node is draining. */
function replacementReason(previous: ExecutionState, partition: number): string {
  return `replacement of partition ${partition}: ${previous.executionId} runs on node ${previous.nodeId}, which is draining`;
}

/** Why a partition gets another execution, as its Create's reason and its history entry say. */
function retryReason(previous: ExecutionState, partition: number): string {
  return `retry of partition ${partition}: ${failureOf(previous)}`;
}
