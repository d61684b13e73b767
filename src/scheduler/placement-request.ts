import type { Health, Membership, NodeType } from "../events/catalog/node-info.ts";
import type { Resources } from "./resources.ts";
import type { JobType } from "../events/catalog/job-spec.ts";
import type { FleetView } from "./fleet/fleet-view.ts";

export type { JobType };

/**
 * Bacalhau's LabelSelectorRequirement (a job's Constraints): Kubernetes' operators as they travel
 * in a job spec — "=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt".
 */
export interface ConstraintRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values: readonly string[];
}

/** Bacalhau's execution ComputeState names. */
export type ExecutionComputeState =
  | "New"
  | "AskForBid"
  | "AskForBidAccepted"
  | "AskForBidRejected"
  | "BidAccepted"
  | "Running"
  | "Publishing"
  | "BidRejected"
  | "Completed"
  | "Failed"
  | "Cancelled";

export type ExecutionDesiredState = "Pending" | "Running" | "Stopped";

/** One execution the job already has, whatever its state. */
export interface ExistingExecution {
  readonly id: string;
  readonly nodeId: string;
  readonly state: ExecutionComputeState;
  readonly desiredState: ExecutionDesiredState;
  /** Which of a batch or service job's Count replicas it is (Bacalhau's PartitionIndex), when known. */
  readonly partitionIndex?: number;
  /**
   * Runs on a draining node until a replacement runs elsewhere (a service's, docs/nodes.md Drain):
   * it holds no partition, so placement places its replacement while it still runs.
   */
  readonly leaving?: boolean;
  /** Ended because its node never answered its work (its answer bound passed): the node takes no more of the job. */
  readonly unanswered?: boolean;
  /** Why its node refused to bid (AskForBidRejected), in the node's words: what a user can act on. */
  readonly refusal?: string;
}

/** A node as placement sees it: what the node read model stores, without its liveness details. */
export interface CandidateNode {
  readonly id: string;
  readonly type: NodeType;
  readonly membership: Membership;
  readonly health: Health;
  readonly labels: Readonly<Record<string, string>>;
  /** The execution engines it runs (Bacalhau's ComputeNodeInfo.ExecutionEngines). */
  readonly engines: readonly string[];
  /** The publishers it has (Bacalhau's ComputeNodeInfo.Publishers); absent: none. */
  readonly publishers?: readonly string[];
  /** The storage types it reads inputs from (Bacalhau's ComputeNodeInfo.StorageSources); absent: none. */
  readonly storageSources?: readonly string[];
  /** What it offers in total (Bacalhau's MaxCapacity); what is free is this minus the ledger. */
  readonly capacity: Resources;
  /** The most it takes for one job (Bacalhau's MaxJobRequirements), when it says. */
  readonly maxJobRequirements?: Resources;
  /** Set while an operator (or a drain) has cordoned it: it takes no new placements. */
  readonly cordoned?: { readonly reason: string };
  /** Why an operator withholds new work from it ("node is draining"), when one does. */
  readonly unschedulable?: string;
}

/** When a job that cannot be placed may wait instead of failing (Bacalhau's Job Queuing). */
export interface QueuePolicy {
  /** The job's QueueTimeout (from its spec or JobDefaults), in ms; 0 means it fails at once. */
  readonly timeoutMs: number;
  /**
   * When the job's current version started (its CreateTime until an update or rerun), in ms since the epoch: the
   * QueueTimeout counts from here.
   */
  readonly createdAtMs: number;
  /** The time of this placement (from the command's metadata), in ms since the epoch. */
  readonly nowMs: number;
}

export interface PlacementRequest {
  readonly jobId: string;
  readonly type: JobType;
  /** Replicas of a batch or service job; ops and daemon jobs ignore it (one per matching node). */
  readonly count: number;
  readonly constraints: readonly ConstraintRequirement[];
  /** The task's engine type ("docker"), compared without regard to case as Bacalhau does. */
  readonly engine: string;
  /** The type of the task's publisher (Bacalhau's Task.Publisher.Type); absent: it publishes nothing. */
  readonly publisher?: string;
  /** The storage types of the task's inputs, each once (Bacalhau's AllInputSourcesTypes); absent: none. */
  readonly storageTypes?: readonly string[];
  /** What each execution needs. */
  readonly resources: Resources;
  readonly executions: readonly ExistingExecution[];
  /**
   * Every node of the cluster: a list, or a fleet view (FleetView), whose index lets placement judge only the nodes a
   * job can take when it finds them there. Either gives the same result.
   */
  readonly nodes: readonly CandidateNode[] | FleetView;
  readonly queue: QueuePolicy;
  /**
   * How many failed executions a batch or service job may retry; undefined retries always, as
   * Bacalhau's default (still bounded: a node takes a job at most twice, see placeJob).
   */
  readonly maxRetries?: number;
  /**
   * New executions one placement makes at most (Bacalhau's MaxExecutionsPerEval); the rest are
   * counted in the result's `deferred`, for the next evaluation. Undefined: as many as there are nodes for.
   */
  readonly maxPlacements?: number;
}
