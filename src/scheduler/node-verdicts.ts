import { matchesRequirement, type LabelSelector } from "../labels/label-selector.ts";
import type { CapacityLedger } from "./capacity-ledger.ts";
import { formatConstraints, formatLabels, type JobSelectors } from "./job-constraints.ts";
import type { CandidateNode, ExistingExecution, PlacementRequest } from "./placement-request.ts";
import {
  fitsWithin,
  formatResources,
  humanBytes,
  isZeroResources,
  plainCores,
  subtractResources,
  type Resources,
} from "./resources.ts";
import { isDiscarded } from "../../machines/execution/execution-states.ts";
import { listOf } from "./fleet/fleet-view.ts";

/** Why a node cannot take an execution of the job. */
export type RejectionCode =
  // The gate: Bacalhau never ranks these nodes, nor counts them as available.
  | "not-compute"
  | "not-approved"
  | "not-healthy"
  // Shoal's: counted as available (so that the reason is named), never suitable.
  | "cordoned"
  // An operator withholds new work (a drain): the node still counts as available, so a shortfall names it.
  | "unschedulable"
  // Bacalhau's ranker chain, in its order.
  | "engine"
  | "publisher"
  | "storage"
  | "labels"
  | "max-job-requirements"
  | "capacity-unknown"
  | "busy"
  | "executed-twice"
  | "has-execution"
  | "bid-rejected"
  // Shoal's: the node left an execution of this job unanswered (it would leave the next one too).
  | "unanswered";

export interface Rejection {
  readonly code: RejectionCode;
  /** Bacalhau's wording where it has one. */
  readonly message: string;
  /** The node may take the job later without anyone changing it (capacity frees up, it recovers). */
  readonly retryable: boolean;
}

export interface NodeVerdict {
  readonly nodeId: string;
  /** Passed the gate (a Compute node, APPROVED, HEALTHY): what Bacalhau counts as "available". */
  readonly available: boolean;
  /** Can take an execution now: available and no rejection. */
  readonly suitable: boolean;
  /** Higher is preferred; meaningful for suitable nodes only. */
  readonly rank: number;
  readonly rejections: readonly Rejection[];
  /** Capacity minus what the ledger holds on it. */
  readonly free: Resources;
}

/** Bacalhau's rank values [pkg/orchestrator/types.go]. */
const RANK_PREFERRED = 10;
const RANK_FRESH_NODE = 3 * RANK_PREFERRED;
const MAX_CAPACITY_RANK = 100;

const reject = (code: RejectionCode, message: string, retryable = false): Rejection => ({ code, message, retryable });

const PER_RESOURCE = (what: string, requested: string, maximum: string) =>
  `more ${what} (${requested}) than the maximum available (${maximum})`;

/**
 * Bacalhau's max-usage ranker: a job asking for nothing passes; a node saying nothing passes (Shoal checks capacity
 * anyway).
 */
function maxJobRequirementsRejection(node: CandidateNode, wanted: Resources): Rejection | undefined {
  const max = node.maxJobRequirements;
  if (max === undefined || isZeroResources(wanted) || fitsWithin(wanted, max)) return undefined;
  const parts: string[] = [];
  if (wanted.cpuMillis > max.cpuMillis)
    parts.push(PER_RESOURCE("CPU", plainCores(wanted.cpuMillis), plainCores(max.cpuMillis)));
  if (wanted.memoryBytes > max.memoryBytes)
    parts.push(PER_RESOURCE("memory", humanBytes(wanted.memoryBytes), humanBytes(max.memoryBytes)));
  if (wanted.diskBytes > max.diskBytes)
    parts.push(PER_RESOURCE("disk", humanBytes(wanted.diskBytes), humanBytes(max.diskBytes)));
  if (wanted.gpus > max.gpus) parts.push(PER_RESOURCE("GPUs", String(wanted.gpus), String(max.gpus)));
  return reject("max-job-requirements", `job requires ${parts.join(" and ")}`);
}

/** How much each resource counts when free capacities are compared: CPU, memory, disk, GPUs. */
export type CapacityWeights = readonly [number, number, number, number];

/** Bacalhau's job-dependent weights for comparing capacities: the resources the job asks for most count most. */
export function capacityWeights(wanted: Resources): CapacityWeights {
  const n = [wanted.cpuMillis / 1000, wanted.memoryBytes / 1e6, wanted.diskBytes / 1e9, wanted.gpus] as const;
  const total = n[0] + n[1] + n[2] + n[3];
  return total === 0 ? [0.4, 0.3, 0.2, 0.1] : [n[0] / total, n[1] / total, n[2] / total, n[3] / total];
}

/**
 * A verdict's reasons as bits, in the order a verdict names them: the gate, then Bacalhau's
 * ranker chain. Judging a node sets bits and makes no message; the messages are made only when
 * a verdict is asked for.
 */
const CODES: readonly RejectionCode[] = [
  "not-compute",
  "not-approved",
  "not-healthy",
  "cordoned",
  "unschedulable",
  "engine",
  "publisher",
  "storage",
  "labels",
  "max-job-requirements",
  "capacity-unknown",
  "busy",
  "executed-twice",
  "has-execution",
  "bid-rejected",
  "unanswered",
];
const bit = (code: RejectionCode): number => 1 << CODES.indexOf(code);
const NOT_COMPUTE = bit("not-compute");
const NOT_APPROVED = bit("not-approved");
const NOT_HEALTHY = bit("not-healthy");
const GATE = NOT_COMPUTE | NOT_APPROVED | NOT_HEALTHY;
const CORDONED = bit("cordoned");
const UNSCHEDULABLE = bit("unschedulable");
const ENGINE = bit("engine");
const PUBLISHER = bit("publisher");
const STORAGE = bit("storage");
const LABELS = bit("labels");
const MAX_JOB = bit("max-job-requirements");
const CAPACITY_UNKNOWN = bit("capacity-unknown");
const BUSY = bit("busy");
const EXECUTED_TWICE = bit("executed-twice");
const HAS_EXECUTION = bit("has-execution");
const BID_REJECTED = bit("bid-rejected");
const UNANSWERED = bit("unanswered");

/**
 * Bacalhau's previous-executions ranker for batch and service jobs: a node that never ran the
 * job is preferred; one whose single execution was discarded (failed, cancelled, bid refused by
 * the orchestrator) may take a retry at lower rank; a node with two executions, or with one that
 * is still active or completed, or that refused to bid (or never answered), is out. So a job is tried at most twice
 * per node, which bounds its retries. Ops and daemon jobs take one execution per node, ever.
 */
function previousBits(type: PlacementRequest["type"], onNode: readonly ExistingExecution[] | undefined): number {
  if (onNode === undefined || onNode.length === 0) return 0;
  if (type === "ops" || type === "daemon") return HAS_EXECUTION;
  // Like a refused bid: a node that never answered this job's work does not get it again.
  if (onNode.some((e) => e.unanswered === true)) return UNANSWERED;
  if (onNode.length > 1) return EXECUTED_TWICE;
  const only = onNode[0] as ExistingExecution;
  if (only.state === "AskForBidRejected") return BID_REJECTED;
  return isDiscarded(only.state) ? 0 : HAS_EXECUTION;
}

function supportsEngine(node: CandidateNode, engine: string, wanted: string): boolean {
  for (const e of node.engines) if (e === engine || e === wanted || e.toLowerCase() === wanted) return true;
  return false;
}

/** Bacalhau's publishers ranker: the job's publisher type, among the node's (in any case). */
function lacksPublisher(node: CandidateNode, type: string | undefined): boolean {
  if (type === undefined) return false;
  return !(node.publishers ?? []).some((p) => p.toLowerCase() === type.toLowerCase());
}

/** Bacalhau's storages ranker: every storage type the job's inputs use, among the node's (in any case). */
function missingStorage(node: CandidateNode, types: readonly string[] | undefined): string | undefined {
  if (types === undefined) return undefined;
  const has = node.storageSources ?? [];
  return types.find((t) => !has.some((s) => s.toLowerCase() === t.toLowerCase()));
}

function matchesAll(requirements: LabelSelector["requirements"], labels: Readonly<Record<string, string>>): boolean {
  for (const r of requirements) if (!matchesRequirement(r, labels)) return false;
  return true;
}

/**
 * A node's free capacity as one number, in the units and weights Bacalhau's available-capacity ranker compares (cores,
 * MB, GB, GPUs). Every caller computes it here, in the same order of operations, so that equal inputs give the same
 * double.
 */
export function weighFree(
  freeCpu: number,
  freeMemory: number,
  freeDisk: number,
  freeGpus: number,
  weights: CapacityWeights,
): number {
  return (
    (freeCpu / 1000) * weights[0] +
    (freeMemory / 1e6) * weights[1] +
    (freeDisk / 1e9) * weights[2] +
    freeGpus * weights[3]
  );
}

/** weighFree of capacity minus what is held, each resource never below zero. */
export function weightedFree(capacity: Resources, held: Resources, weights: CapacityWeights): number {
  return weighFree(
    Math.max(0, capacity.cpuMillis - held.cpuMillis),
    Math.max(0, capacity.memoryBytes - held.memoryBytes),
    Math.max(0, capacity.diskBytes - held.diskBytes),
    Math.max(0, capacity.gpus - held.gpus),
    weights,
  );
}

/** Up to this many places, the best nodes are picked in one pass; more, all suitable nodes are sorted. */
const FEW = 16;

const byId = (a: CandidateNode, b: CandidateNode): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Every candidate judged for this job against this ledger, as numbers per node in the request's
 * order: the reasons it cannot take the job (bits) and its rank. Placement reads only these; the
 * verdicts with Bacalhau's messages are made on demand (`verdicts()`), which a job that found its
 * nodes never asks for. So judging a fleet allocates nothing per node.
 */
export interface Judgement {
  /** Compute nodes that are APPROVED and HEALTHY (Bacalhau's "available"). */
  readonly available: number;
  /** Of those, the ones that can take an execution now. */
  readonly suitable: number;
  /** Some available node would take the job but for its free capacity now (Bacalhau's "all busy"). */
  readonly someBusy: boolean;
  /** The suitable nodes' ids, best first (rankOrder); at most `limit` of them. */
  ranked(limit?: number): string[];
  /** Every candidate's verdict, sorted by id; made on the first call, then kept. */
  verdicts(): readonly NodeVerdict[];
}

export function judge(request: PlacementRequest, selectors: JobSelectors, ledger: CapacityLedger): Judgement {
  return judgeList(request, listOf(request.nodes), selectors, ledger);
}

/**
 * judge() over these nodes. With `peakFree` (the highest weighted free capacity among the whole fleet's available
 * nodes, which a subset of it cannot know), suitable nodes are ranked against that instead of against this list's.
 */
export function judgeList(
  request: PlacementRequest,
  nodes: readonly CandidateNode[],
  selectors: JobSelectors,
  ledger: CapacityLedger,
  peakFree?: number,
): Judgement {
  const n = nodes.length;
  const want = request.resources;
  const wantedEngine = request.engine.toLowerCase();
  const required = selectors.required.requirements;
  const favoured = selectors.favoured.requirements;
  const weights = capacityWeights(want);
  let byNode: Map<string, ExistingExecution[]> | undefined;
  for (const e of request.executions) {
    byNode ??= new Map();
    const list = byNode.get(e.nodeId);
    if (list) list.push(e);
    else byNode.set(e.nodeId, [e]);
  }
  const reasons = new Uint16Array(n);
  const ranks = new Float64Array(n);
  const freeWeight = new Float64Array(n);
  let available = 0;
  let suitable = 0;
  let someBusy = false;
  let maxFree = 0;
  for (let i = 0; i < n; i++) {
    const node = nodes[i] as CandidateNode;
    let bits = 0;
    if (node.type !== "Compute") bits |= NOT_COMPUTE;
    if (node.membership !== "APPROVED") bits |= NOT_APPROVED;
    if (node.health !== "HEALTHY") bits |= NOT_HEALTHY;
    if (node.cordoned !== undefined) bits |= CORDONED;
    if (node.unschedulable !== undefined) bits |= UNSCHEDULABLE;
    if (!supportsEngine(node, request.engine, wantedEngine)) bits |= ENGINE;
    if (lacksPublisher(node, request.publisher)) bits |= PUBLISHER;
    if (missingStorage(node, request.storageTypes) !== undefined) bits |= STORAGE;
    if (required.length > 0 && !matchesAll(required, node.labels)) bits |= LABELS;
    const max = node.maxJobRequirements;
    if (max !== undefined && !isZeroResources(want) && !fitsWithin(want, max)) bits |= MAX_JOB;
    // Free capacity, as numbers: capacity minus what the ledger holds, never below zero.
    const cap = node.capacity;
    const held = ledger.held(node.id);
    const freeCpu = Math.max(0, cap.cpuMillis - held.cpuMillis);
    const freeMemory = Math.max(0, cap.memoryBytes - held.memoryBytes);
    const freeDisk = Math.max(0, cap.diskBytes - held.diskBytes);
    const freeGpus = Math.max(0, cap.gpus - held.gpus);
    if (isZeroResources(cap)) bits |= CAPACITY_UNKNOWN;
    else if (
      want.cpuMillis > freeCpu ||
      want.memoryBytes > freeMemory ||
      want.diskBytes > freeDisk ||
      want.gpus > freeGpus
    )
      bits |= BUSY;
    bits |= previousBits(request.type, byNode?.get(node.id));
    let rank = (byNode?.has(node.id) !== true ? RANK_FRESH_NODE : 0) + (required.length > 0 ? RANK_PREFERRED : 0);
    if (favoured.length > 0 && matchesAll(favoured, node.labels)) rank += RANK_PREFERRED;
    reasons[i] = bits;
    ranks[i] = rank;
    if ((bits & GATE) === 0) {
      available++;
      const w = weighFree(freeCpu, freeMemory, freeDisk, freeGpus, weights);
      freeWeight[i] = w;
      if (w > maxFree) maxFree = w;
      if (bits === BUSY) someBusy = true;
    }
    if (bits === 0) suitable++;
  }
  if (peakFree !== undefined) maxFree = peakFree;
  // Bacalhau's available-capacity ranker: 0-100 by weighted free capacity, relative to the freest available node.
  if (maxFree > 0)
    for (let i = 0; i < n; i++)
      if (reasons[i] === 0)
        ranks[i] = (ranks[i] as number) + Math.floor(((freeWeight[i] as number) / maxFree) * MAX_CAPACITY_RANK);

  const better = (a: number, b: number): number => {
    const ra = ranks[a] as number;
    const rb = ranks[b] as number;
    if (ra !== rb) return rb - ra;
    const ia = (nodes[a] as CandidateNode).id;
    const ib = (nodes[b] as CandidateNode).id;
    return ia < ib ? -1 : ia > ib ? 1 : 0;
  };
  let verdicts: NodeVerdict[] | undefined;
  return {
    available,
    suitable,
    someBusy,
    ranked(limit = Infinity) {
      if (limit > FEW) {
        const all: number[] = [];
        for (let i = 0; i < n; i++) if (reasons[i] === 0) all.push(i);
        return all
          .sort(better)
          .slice(0, limit)
          .map((i) => (nodes[i] as CandidateNode).id);
      }
      // A few places (a Count): keep the best so far in order instead of sorting every suitable node.
      const best: number[] = [];
      for (let i = 0; i < n && limit > 0; i++) {
        if (reasons[i] !== 0) continue;
        if (best.length >= limit && better(i, best[best.length - 1] as number) >= 0) continue;
        let at = best.length;
        while (at > 0 && better(i, best[at - 1] as number) < 0) at--;
        best.splice(at, 0, i);
        if (best.length > limit) best.pop();
      }
      return best.map((i) => (nodes[i] as CandidateNode).id);
    },
    verdicts() {
      if (verdicts !== undefined) return verdicts;
      const constraintsText = formatConstraints(request.constraints);
      const order = Array.from({ length: n }, (_, i) => i).sort((a, b) =>
        byId(nodes[a] as CandidateNode, nodes[b] as CandidateNode),
      );
      verdicts = order.map((i) =>
        verdictAt(
          request,
          nodes[i] as CandidateNode,
          reasons[i] as number,
          ranks[i] as number,
          ledger,
          constraintsText,
        ),
      );
      return verdicts;
    },
  };
}

/** An operator must uncordon the node: not retryable on its own. */
function cordonedMessage(node: CandidateNode): string {
  const reason = node.cordoned?.reason ?? "";
  return reason === "" ? "node is cordoned" : `node is cordoned (${reason})`;
}

/** Bacalhau's words, and the node's own reason after them when it gave one (an input it may not read, say). */
function bidRejectedMessage(request: PlacementRequest, nodeId: string): string {
  const why = request.executions.find((e) => e.nodeId === nodeId && e.state === "AskForBidRejected")?.refusal;
  return why === undefined ? "node rejected the job's bid" : `node rejected the job's bid: ${why}`;
}

/** One node's verdict, its reasons in words (Bacalhau's where it has them). */
function verdictAt(
  request: PlacementRequest,
  node: CandidateNode,
  bits: number,
  rank: number,
  ledger: CapacityLedger,
  constraintsText: string,
): NodeVerdict {
  const free = subtractResources(node.capacity, ledger.held(node.id));
  const rejections: Rejection[] = [];
  if (bits & NOT_COMPUTE) rejections.push(reject("not-compute", `node is a ${node.type} node, not a Compute node`));
  if (bits & NOT_APPROVED)
    rejections.push(
      reject("not-approved", `node membership is ${node.membership}, not APPROVED`, node.membership === "PENDING"),
    );
  if (bits & NOT_HEALTHY) rejections.push(reject("not-healthy", `node is ${node.health}, not HEALTHY`, true));
  if (bits & CORDONED) rejections.push(reject("cordoned", cordonedMessage(node)));
  // An operator must undrain the node: not retryable on its own.
  if (bits & UNSCHEDULABLE) rejections.push(reject("unschedulable", node.unschedulable as string));
  if (bits & ENGINE)
    rejections.push(reject("engine", `does not support ${request.engine}, only ${node.engines.join(", ")}`));
  if (bits & PUBLISHER) {
    const has = node.publishers ?? [];
    const why = has.length === 0 ? "it publishes no results" : `only ${has.join(", ")}`;
    rejections.push(reject("publisher", `does not support ${request.publisher as string}, ${why}`));
  }
  if (bits & STORAGE) {
    const missing = missingStorage(node, request.storageTypes) as string;
    const has = node.storageSources ?? [];
    const why = has.length === 0 ? "it reads no input sources" : `only ${has.join(", ")}`;
    rejections.push(reject("storage", `does not support ${missing}, ${why}`));
  }
  if (bits & LABELS)
    rejections.push(
      reject("labels", `labels ${formatLabels(node.labels)} don't match required selectors ${constraintsText}`),
    );
  if (bits & MAX_JOB) rejections.push(maxJobRequirementsRejection(node, request.resources) as Rejection);
  if (bits & CAPACITY_UNKNOWN) rejections.push(reject("capacity-unknown", "node capacity is unknown", true));
  if (bits & BUSY) rejections.push(reject("busy", `node busy with available capacity ${formatResources(free)}`, true));
  if (bits & EXECUTED_TWICE)
    rejections.push(reject("executed-twice", "job already executed on this node more than once"));
  if (bits & HAS_EXECUTION) rejections.push(reject("has-execution", "job already has an execution on this node"));
  if (bits & BID_REJECTED) rejections.push(reject("bid-rejected", bidRejectedMessage(request, node.id)));
  if (bits & UNANSWERED) rejections.push(reject("unanswered", "node did not answer the job's work"));
  return { nodeId: node.id, available: (bits & GATE) === 0, suitable: bits === 0, rank, rejections, free };
}

/**
 * Every candidate judged for this job against this ledger, sorted by node id: the gate, then
 * Bacalhau's filters (engine, labels, max job requirements, free capacity, previous executions),
 * every failed one named; suitable nodes get a rank (see rankOrder).
 */
export function judgeNodes(request: PlacementRequest, selectors: JobSelectors, ledger: CapacityLedger): NodeVerdict[] {
  return [...judge(request, selectors, ledger).verdicts()];
}

/** Suitable first by rank, highest first; equal ranks by node id (Bacalhau draws lots; placement is pure). */
export function rankOrder(a: NodeVerdict, b: NodeVerdict): number {
  if (a.rank !== b.rank) return b.rank - a.rank;
  return a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0;
}
