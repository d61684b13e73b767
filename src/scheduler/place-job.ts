import { reserve, type CapacityLedger } from "./capacity-ledger.ts";
import { isDiscarded } from "../../machines/execution/execution-states.ts";
import { isTerminal } from "./execution-states.ts";
import { FleetView } from "./fleet/fleet-view.ts";
import { judgeFleet } from "./fleet/judge-fleet.ts";
import { jobSelectors } from "./job-constraints.ts";
import { judge, type Judgement, type NodeVerdict } from "./node-verdicts.ts";
import { PlacementInputError, placementRequestProblem } from "./placement-input-error.ts";
import type { ExistingExecution, JobType, PlacementRequest } from "./placement-request.ts";
import type { Resources } from "./resources.ts";
import { noMatchingNodesMessage, notEnoughNodesMessage } from "./shortfall-message.ts";

type Existing = ExistingExecution;

/** A new execution to create. */
export interface Placement {
  readonly nodeId: string;
  /**
   * Bacalhau's desired state for a new execution: batch and service ask the node to bid and wait
   * for approval (Pending); ops and daemon run at once (Running).
   */
  readonly desiredState: "Pending" | "Running";
  /** The batch or service replica it runs (Bacalhau's PartitionIndex); absent for ops and daemon. */
  readonly partitionIndex?: number;
  readonly resources: Resources;
}

/**
 * - placed: everything the job needs now has a node (which may mean nothing new was needed).
 * - queued: too few nodes, and the job may wait (QueueTimeout not passed): what could be placed
 *   was; try again after Orchestrator.Scheduler.QueueBackoff or when the cluster changes.
 * - failed: the job fails now; `message` says why.
 * - waiting: a daemon job with no new node to run on; it stays as it is until one comes.
 */
export type PlacementDecision = "placed" | "queued" | "failed" | "waiting";

/** Why nodes were short: some would fit but lack free capacity now ("all busy"), or none fits the job. */
export type ShortfallCause = "busy" | "no-match";

export interface Shortfall {
  /** Executions still needed (batch and service; ops and daemon ask for every matching node). */
  readonly requested?: number;
  /** Compute nodes that are APPROVED and HEALTHY. */
  readonly available: number;
  /** Of those, the ones that could take an execution. */
  readonly suitable: number;
  readonly cause: ShortfallCause;
}

export interface PlacementResult {
  readonly decision: PlacementDecision;
  readonly placements: readonly Placement[];
  /** The input ledger plus the placements: what the next placement must be given. */
  readonly ledger: CapacityLedger;
  /** Every candidate node, sorted by id, with its rank or its reasons. */
  readonly nodes: readonly NodeVerdict[];
  /** Set when nodes were short (queued, failed for lack of nodes, daemon waiting). */
  readonly shortfall?: Shortfall;
  /**
   * Bacalhau's text: for failed, the job's failure message; for queued, the reason (the job's
   * history says "Job queued. <message>"); for waiting, why no node took the daemon job.
   */
  readonly message?: string;
  /**
   * Queued with nothing placed: the job itself becomes Queued (Bacalhau marks a job Queued only
   * when not a single node matched; a job placed in part stays as it is and is retried).
   */
  readonly jobQueued?: boolean;
  /** Placements left for a later evaluation by the request's `maxPlacements` (nodes were found for them). */
  readonly deferred?: number;
}

/** Bacalhau's message when a job's failed executions may not be retried. */
export const RETRIES_EXHAUSTED_MESSAGE = "Job failed because it has been retried too many times";

/**
 * Where a job's new executions go, given its existing ones, the candidate nodes and the capacity
 * ledger. Pure: the caller serializes placements and threads `result.ledger` into the next one.
 * Throws PlacementInputError for a request the job spec validation should have refused.
 *
 * - batch and service: Count replicas (partitions 0..Count-1). A partition is done while it has
 *   an active execution (or, batch only, a completed one); the others get new executions, each
 *   on a different node, best-ranked first. Failed executions are retried unless `maxRetries`
 *   is exceeded; a node takes a job at most twice, a retry preferring other nodes.
 * - ops: one execution on each matching node that has none of the job yet; fails when nothing
 *   matches and the job has no execution at all.
 * - daemon: one execution on each matching node that has none of the job yet; never fails.
 *
 * Too few nodes: without a QueueTimeout, or past it, the job fails with Bacalhau's message;
 * within it, it is queued (and what fits is placed).
 */
export function placeJob(request: PlacementRequest, ledger: CapacityLedger): PlacementResult {
  const problem = placementRequestProblem(request);
  if (problem !== undefined) throw new PlacementInputError(problem);
  const selectors = jobSelectors(request.constraints);
  const judged =
    request.nodes instanceof FleetView
      ? judgeFleet(request, request.nodes, selectors, ledger)
      : judge(request, selectors, ledger);
  return request.type === "batch" || request.type === "service"
    ? placeReplicas(request, ledger, judged)
    : placePerNode(request, ledger, judged);
}

/**
 * The result, its `nodes` (every node's verdict, with messages) made only if read: a job that found its nodes never
 * needs them.
 */
function resultOf(judged: Judgement, fields: Omit<PlacementResult, "nodes">): PlacementResult {
  return Object.defineProperty({ ...fields }, "nodes", {
    get: () => judged.verdicts(),
    enumerable: true,
  }) as PlacementResult;
}

function settle(ledger: CapacityLedger, placements: Placement[]): CapacityLedger {
  return placements.length === 0 ? ledger : reserve(ledger, placements);
}

function shortfallOf(requested: number | undefined, judged: Judgement): Shortfall {
  // "All busy": a node the job fits but for its free capacity now.
  const counts = {
    available: judged.available,
    suitable: judged.suitable,
    cause: judged.someBusy ? ("busy" as const) : ("no-match" as const),
  };
  return requested === undefined ? counts : { requested, ...counts };
}

/**
 * Bacalhau fails a job that cannot be placed once `now − QueueTimeout` is after its CreateTime (Shoal: its current
 * version's start); 0 never queues.
 */
function mayQueue(request: PlacementRequest): boolean {
  const { timeoutMs, createdAtMs, nowMs } = request.queue;
  return timeoutMs > 0 && nowMs - createdAtMs <= timeoutMs;
}

/** What holds a partition: an active (or, batch, completed) execution; one leaving a draining node holds none. */
function heldPartitions(type: JobType, count: number, executions: readonly Existing[]) {
  const used = new Set<number>();
  let unindexed = 0;
  for (const e of executions) {
    const active = !isTerminal(e) || (type === "batch" && e.state === "Completed");
    if (!active || isDiscarded(e.state) || e.leaving === true) continue;
    if (e.partitionIndex !== undefined && e.partitionIndex >= 0 && e.partitionIndex < count) used.add(e.partitionIndex);
    else if (e.partitionIndex === undefined) unindexed++;
  }
  return { used, unindexed };
}

/** How many of the partitions 0..count-1 hold no execution: work in the executions, never in the Count. */
export function remainingPartitionCount(type: JobType, count: number, executions: readonly Existing[]): number {
  const { used, unindexed } = heldPartitions(type, count, executions);
  return Math.max(0, count - used.size - unindexed);
}

/**
 * The lowest `max` of the partitions 0..count-1 that hold no execution. An execution that carries
 * no index holds the lowest free one (a count-based model). Work in the executions and `max`,
 * never in the Count: a job's Count may be far more than one placement can make.
 */
export function remainingPartitions(type: JobType, count: number, execs: readonly Existing[], max: number): number[] {
  const { used, unindexed } = heldPartitions(type, count, execs);
  const remaining: number[] = [];
  for (let i = 0, skip = unindexed; i < count && remaining.length < max; i++) {
    if (used.has(i)) continue;
    if (skip > 0) skip--;
    else remaining.push(i);
  }
  return remaining;
}

function placeReplicas(request: PlacementRequest, ledger: CapacityLedger, judged: Judgement): PlacementResult {
  const wanted = remainingPartitionCount(request.type, request.count, request.executions);
  if (wanted === 0) return resultOf(judged, { decision: "placed", placements: [], ledger });
  const failed = request.executions.filter((e) => e.state === "Failed").length;
  if (failed > 0 && request.maxRetries !== undefined && failed > request.maxRetries) {
    return resultOf(judged, { decision: "failed", placements: [], ledger, message: RETRIES_EXHAUSTED_MESSAGE });
  }
  // At most one partition per node: the nodes bound what is ranked, the batch bounds what is made.
  const ranked = judged.ranked(wanted);
  const made = Math.min(ranked.length, request.maxPlacements ?? Infinity);
  const partitions = remainingPartitions(request.type, request.count, request.executions, made);
  const placements: Placement[] = partitions.map((partitionIndex, i) => ({
    nodeId: ranked[i] as string,
    desiredState: "Pending",
    partitionIndex,
    resources: request.resources,
  }));
  const deferred = ranked.length - placements.length;
  const reserved = settle(ledger, placements);
  if (ranked.length === wanted) return resultOf(judged, { decision: "placed", placements, ledger: reserved, deferred });
  const shortfall = shortfallOf(wanted, judged);
  const message = notEnoughNodesMessage(wanted, judged.verdicts());
  if (!mayQueue(request)) return resultOf(judged, { decision: "failed", placements: [], ledger, shortfall, message });
  const jobQueued = ranked.length === 0;
  return resultOf(judged, {
    decision: "queued",
    placements,
    ledger: reserved,
    shortfall,
    message,
    jobQueued,
    deferred,
  });
}

function placePerNode(request: PlacementRequest, ledger: CapacityLedger, judged: Judgement): PlacementResult {
  // Nodes with any execution of the job are rejected by judge already ("has-execution").
  const ranked = judged.ranked();
  const made = ranked.length > (request.maxPlacements ?? Infinity) ? ranked.slice(0, request.maxPlacements) : ranked;
  const { resources } = request;
  const placements: Placement[] = made.map((nodeId) => ({ nodeId, desiredState: "Running", resources }));
  const deferred = ranked.length - placements.length;
  if (placements.length > 0) {
    return resultOf(judged, { decision: "placed", placements, ledger: settle(ledger, placements), deferred });
  }
  // Already running somewhere: nothing new to do now (Bacalhau fails an ops job only when it never ran).
  if (request.executions.length > 0) return resultOf(judged, { decision: "placed", placements, ledger });
  const shortfall = shortfallOf(undefined, judged);
  const message = noMatchingNodesMessage(judged.verdicts());
  // A daemon job never fails for want of nodes: it waits for one to join.
  if (request.type === "daemon")
    return resultOf(judged, { decision: "waiting", placements, ledger, shortfall, message });
  if (!mayQueue(request)) return resultOf(judged, { decision: "failed", placements, ledger, shortfall, message });
  return resultOf(judged, { decision: "queued", placements, ledger, shortfall, message, jobQueued: true });
}
