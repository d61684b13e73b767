import { matchesLabels } from "../labels/label-selector.ts";
import { placedOn, type CapacityLedger } from "./capacity-ledger.ts";
import { formatConstraints, formatLabels, type JobSelectors } from "./job-constraints.ts";
import type { CandidateNode, ExistingExecution, PlacementRequest } from "./placement-request.ts";
import { fitsWithin, formatResources, humanBytes, isZeroResources, plainCores, subtractResources, type Resources } from "./resources.ts";
import { isDiscarded } from "./execution-states.ts";

/** Why a node cannot take an execution of the job. */
export type RejectionCode =
  // The gate: Bacalhau never ranks these nodes, nor counts them as available.
  | "not-compute"
  | "not-approved"
  | "not-healthy"
  // Bacalhau's ranker chain, in its order.
  | "engine"
  | "labels"
  | "max-job-requirements"
  | "capacity-unknown"
  | "busy"
  | "executed-twice"
  | "has-execution"
  | "bid-rejected";

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

function gate(node: CandidateNode): Rejection[] {
  const out: Rejection[] = [];
  if (node.type !== "Compute") out.push(reject("not-compute", `node is a ${node.type} node, not a Compute node`));
  if (node.membership !== "APPROVED") out.push(reject("not-approved", `node membership is ${node.membership}, not APPROVED`, node.membership === "PENDING"));
  if (node.health !== "HEALTHY") out.push(reject("not-healthy", `node is ${node.health}, not HEALTHY`, true));
  return out;
}

function engineRejection(node: CandidateNode, engine: string): Rejection | undefined {
  const wanted = engine.toLowerCase();
  if (node.engines.some((e) => e.toLowerCase() === wanted)) return undefined;
  return reject("engine", `does not support ${engine}, only ${node.engines.join(", ")}`);
}

const PER_RESOURCE = (what: string, requested: string, maximum: string) => `more ${what} (${requested}) than the maximum available (${maximum})`;

/** Bacalhau's max-usage ranker: a job asking for nothing passes; a node saying nothing passes (Shoal checks capacity anyway). */
function maxJobRequirementsRejection(node: CandidateNode, wanted: Resources): Rejection | undefined {
  const max = node.maxJobRequirements;
  if (max === undefined || isZeroResources(wanted) || fitsWithin(wanted, max)) return undefined;
  const parts: string[] = [];
  if (wanted.cpuMillis > max.cpuMillis) parts.push(PER_RESOURCE("CPU", plainCores(wanted.cpuMillis), plainCores(max.cpuMillis)));
  if (wanted.memoryBytes > max.memoryBytes) parts.push(PER_RESOURCE("memory", humanBytes(wanted.memoryBytes), humanBytes(max.memoryBytes)));
  if (wanted.diskBytes > max.diskBytes) parts.push(PER_RESOURCE("disk", humanBytes(wanted.diskBytes), humanBytes(max.diskBytes)));
  if (wanted.gpus > max.gpus) parts.push(PER_RESOURCE("GPUs", String(wanted.gpus), String(max.gpus)));
  return reject("max-job-requirements", `job requires ${parts.join(" and ")}`);
}

/** Free capacity: where Bacalhau trusts the node's own report, Shoal counts what it placed itself. */
function capacityRejection(node: CandidateNode, wanted: Resources, free: Resources): Rejection | undefined {
  if (isZeroResources(node.capacity)) return reject("capacity-unknown", "node capacity is unknown", true);
  if (fitsWithin(wanted, free)) return undefined;
  return reject("busy", `node busy with available capacity ${formatResources(free)}`, true);
}

/**
 * Bacalhau's previous-executions ranker for batch and service jobs: a node that never ran the
 * job is preferred; one whose single execution was discarded (failed, cancelled, bid refused by
 * the orchestrator) may take a retry at lower rank; a node with two executions, or with one that
 * is still active or completed, or that refused to bid, is out. So a job is tried at most twice
 * per node, which bounds its retries. Ops and daemon jobs take one execution per node, ever.
 */
function previousExecutionsRejection(
  type: PlacementRequest["type"],
  onNode: readonly ExistingExecution[],
): { rejection?: Rejection; fresh: boolean } {
  if (onNode.length === 0) return { fresh: true };
  if (type === "ops" || type === "daemon") return { rejection: reject("has-execution", "job already has an execution on this node"), fresh: false };
  if (onNode.length > 1) return { rejection: reject("executed-twice", "job already executed on this node more than once"), fresh: false };
  const only = onNode[0] as ExistingExecution;
  if (only.state === "AskForBidRejected") return { rejection: reject("bid-rejected", "node rejected the job's bid"), fresh: false };
  if (!isDiscarded(only)) return { rejection: reject("has-execution", "job already has an execution on this node"), fresh: false };
  return { fresh: false };
}

/** Bacalhau's job-dependent weights for comparing capacities: the resources the job asks for most count most. */
function capacityWeights(wanted: Resources): readonly [number, number, number, number] {
  const n = [wanted.cpuMillis / 1000, wanted.memoryBytes / 1e6, wanted.diskBytes / 1e9, wanted.gpus] as const;
  const total = n[0] + n[1] + n[2] + n[3];
  return total === 0 ? [0.4, 0.3, 0.2, 0.1] : [n[0] / total, n[1] / total, n[2] / total, n[3] / total];
}

function weighted(r: Resources, w: readonly [number, number, number, number]): number {
  return (r.cpuMillis / 1000) * w[0] + (r.memoryBytes / 1e6) * w[1] + (r.diskBytes / 1e9) * w[2] + r.gpus * w[3];
}

/**
 * Every candidate judged for this job against this ledger, sorted by node id: the gate, then
 * Bacalhau's filters (engine, labels, max job requirements, free capacity, previous executions),
 * every failed one named; suitable nodes get a rank (see rankOrder).
 */
export function judgeNodes(request: PlacementRequest, selectors: JobSelectors, ledger: CapacityLedger): NodeVerdict[] {
  const byNode = new Map<string, ExistingExecution[]>();
  for (const e of request.executions) {
    const list = byNode.get(e.nodeId);
    if (list) list.push(e);
    else byNode.set(e.nodeId, [e]);
  }
  const nodes = [...request.nodes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const weights = capacityWeights(request.resources);
  const constraintsText = formatConstraints(request.constraints);
  const judged = nodes.map((node) => {
    const free = subtractResources(node.capacity, placedOn(ledger, node.id));
    const gated = gate(node);
    const rejections = [...gated];
    const engine = engineRejection(node, request.engine);
    if (engine) rejections.push(engine);
    const hasRequired = selectors.required.requirements.length > 0;
    if (hasRequired && !matchesLabels(selectors.required, node.labels)) {
      rejections.push(reject("labels", `labels ${formatLabels(node.labels)} don't match required selectors ${constraintsText}`));
    }
    const maxJob = maxJobRequirementsRejection(node, request.resources);
    if (maxJob) rejections.push(maxJob);
    const capacity = capacityRejection(node, request.resources, free);
    if (capacity) rejections.push(capacity);
    const previous = previousExecutionsRejection(request.type, byNode.get(node.id) ?? []);
    if (previous.rejection) rejections.push(previous.rejection);
    let rank = (previous.fresh ? RANK_FRESH_NODE : 0) + (hasRequired ? RANK_PREFERRED : 0);
    if (selectors.favoured.requirements.length > 0 && matchesLabels(selectors.favoured, node.labels)) rank += RANK_PREFERRED;
    return { nodeId: node.id, available: gated.length === 0, suitable: rejections.length === 0, rank, rejections, free };
  });
  // Bacalhau's available-capacity ranker: 0-100 by weighted free capacity, relative to the freest available node.
  const maxFree = Math.max(0, ...judged.filter((v) => v.available).map((v) => weighted(v.free, weights)));
  return judged.map((v) => (v.suitable && maxFree > 0 ? { ...v, rank: v.rank + Math.floor((weighted(v.free, weights) / maxFree) * MAX_CAPACITY_RANK) } : v));
}

/** Suitable first by rank, highest first; equal ranks by node id (Bacalhau draws lots; placement is pure). */
export function rankOrder(a: NodeVerdict, b: NodeVerdict): number {
  if (a.rank !== b.rank) return b.rank - a.rank;
  return a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0;
}
