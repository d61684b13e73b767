import { reserve, type CapacityLedger } from "./capacity-ledger.ts";
import { isDiscarded, isTerminal } from "./execution-states.ts";
import { jobSelectors } from "./job-constraints.ts";
import { judge, type Judgement, type NodeVerdict } from "./node-verdicts.ts";
import { PlacementInputError, placementRequestProblem } from "./placement-input-error.ts";
import type { ExistingExecution, PlacementRequest } from "./placement-request.ts";
import type { Resources } from "./resources.ts";
import { noMatchingNodesMessage, notEnoughNodesMessage } from "./shortfall-message.ts";

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
  const judged = judge(request, jobSelectors(request.constraints), ledger);
  return request.type === "batch" || request.type === "service" ? placeReplicas(request, ledger, judged) : placePerNode(request, ledger, judged);
}

/** The result, its `nodes` (every node's verdict, with messages) made only if read: a job that found its nodes never needs them. */
function resultOf(judged: Judgement, fields: Omit<PlacementResult, "nodes">): PlacementResult {
  return Object.defineProperty({ ...fields }, "nodes", { get: () => judged.verdicts(), enumerable: true }) as PlacementResult;
}

function settle(ledger: CapacityLedger, placements: Placement[]): CapacityLedger {
  return placements.length === 0 ? ledger : reserve(ledger, placements);
}

function shortfallOf(requested: number | undefined, judged: Judgement): Shortfall {
  // "All busy": a node the job fits but for its free capacity now.
  const counts = { available: judged.available, suitable: judged.suitable, cause: judged.someBusy ? ("busy" as const) : ("no-match" as const) };
  return requested === undefined ? counts : { requested, ...counts };
}

/** Bacalhau fails a job that cannot be placed once `now − QueueTimeout` is after its CreateTime; 0 never queues. */
function mayQueue(request: PlacementRequest): boolean {
  const { timeoutMs, createdAtMs, nowMs } = request.queue;
  return timeoutMs > 0 && nowMs - createdAtMs <= timeoutMs;
}

/** The partitions 0..count-1 that hold no active (or, batch, completed) execution; one leaving a draining node holds none. */
export function remainingPartitions(type: PlacementRequest["type"], count: number, executions: readonly ExistingExecution[]): number[] {
  const holding = executions.filter((e) => (!isTerminal(e) || (type === "batch" && e.state === "Completed")) && !isDiscarded(e) && e.leaving !== true);
  const used = new Set<number>();
  const unindexed: ExistingExecution[] = [];
  for (const e of holding) {
    if (e.partitionIndex !== undefined && e.partitionIndex >= 0 && e.partitionIndex < count && !used.has(e.partitionIndex)) used.add(e.partitionIndex);
    else if (e.partitionIndex === undefined) unindexed.push(e);
  }
  // An execution that carries no index holds the lowest free one (a count-based model).
  for (let i = 0, left = unindexed.length; i < count && left > 0; i++) {
    if (!used.has(i)) {
      used.add(i);
      left--;
    }
  }
  const remaining: number[] = [];
  for (let i = 0; i < count; i++) if (!used.has(i)) remaining.push(i);
  return remaining;
}

function placeReplicas(request: PlacementRequest, ledger: CapacityLedger, judged: Judgement): PlacementResult {
  const remaining = remainingPartitions(request.type, request.count, request.executions);
  if (remaining.length === 0) return resultOf(judged, { decision: "placed", placements: [], ledger });
  const failed = request.executions.filter((e) => e.state === "Failed").length;
  if (failed > 0 && request.maxRetries !== undefined && failed > request.maxRetries) {
    return resultOf(judged, { decision: "failed", placements: [], ledger, message: RETRIES_EXHAUSTED_MESSAGE });
  }
  const ranked = judged.ranked(remaining.length);
  const placements: Placement[] = ranked.map((nodeId, i) => ({ nodeId, desiredState: "Pending", partitionIndex: remaining[i] as number, resources: request.resources }));
  if (placements.length === remaining.length) return resultOf(judged, { decision: "placed", placements, ledger: settle(ledger, placements) });
  const shortfall = shortfallOf(remaining.length, judged);
  const message = notEnoughNodesMessage(remaining.length, judged.verdicts());
  if (!mayQueue(request)) return resultOf(judged, { decision: "failed", placements: [], ledger, shortfall, message });
  return resultOf(judged, { decision: "queued", placements, ledger: settle(ledger, placements), shortfall, message, jobQueued: placements.length === 0 });
}

function placePerNode(request: PlacementRequest, ledger: CapacityLedger, judged: Judgement): PlacementResult {
  // Nodes with any execution of the job are rejected by judge already ("has-execution").
  const placements: Placement[] = judged.ranked().map((nodeId) => ({ nodeId, desiredState: "Running" as const, resources: request.resources }));
  if (placements.length > 0) return resultOf(judged, { decision: "placed", placements, ledger: settle(ledger, placements) });
  // Already running somewhere: nothing new to do now (Bacalhau fails an ops job only when it never ran).
  if (request.executions.length > 0) return resultOf(judged, { decision: "placed", placements, ledger });
  const shortfall = shortfallOf(undefined, judged);
  const message = noMatchingNodesMessage(judged.verdicts());
  // A daemon job never fails for want of nodes: it waits for one to join.
  if (request.type === "daemon") return resultOf(judged, { decision: "waiting", placements, ledger, shortfall, message });
  if (!mayQueue(request)) return resultOf(judged, { decision: "failed", placements, ledger, shortfall, message });
  return resultOf(judged, { decision: "queued", placements, ledger, shortfall, message, jobQueued: true });
}
