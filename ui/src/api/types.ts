// The API's JSON as the console reads it. Where the server's schema is a small module of its own (Whoami,
// ClusterEvent), its type is imported (types only: nothing of the server is bundled); NodeState's is built from the
// server's read model, so the fields the console reads are written out here (openapi.json has them all).
import type { WhoamiResponse } from "../../../src/api/auth/whoami-response.ts";
import type { ClusterEventJson } from "../../../src/api/events/cluster-event-json.ts";
import type { ExecutionJson, JobHistoryJson, JobJson } from "../../../src/api/jobs/job-json.ts";

/** GET /whoami: who the caller is and what they may do (the server's own type). */
export type Whoami = typeof WhoamiResponse.Type;
export type Capability = Whoami["Capabilities"][number];

export interface Resources {
  readonly CPU?: number;
  readonly Memory?: number;
  readonly Disk?: number;
  readonly GPU?: number;
}

export interface ActorRef {
  readonly type: string;
  readonly id: string;
}

export type Membership = "PENDING" | "APPROVED" | "REJECTED";
export type Health = "HEALTHY" | "UNHEALTHY" | "UNKNOWN";
export type DrainStatus = "draining" | "drained" | "expired";

export interface NodeState {
  readonly Info: {
    readonly NodeID: string;
    readonly NodeType: "Compute" | "Requester";
    readonly Hostname?: string;
    readonly Labels: Readonly<Record<string, string>>;
    readonly ComputeNodeInfo?: {
      readonly ExecutionEngines: readonly string[];
      readonly MaxCapacity: Resources;
      readonly MaxJobRequirements: Resources;
      readonly AvailableCapacity: Resources;
      readonly QueueCapacity: Resources;
      readonly RunningExecutions: number;
      readonly EnqueuedExecutions: number;
    };
    readonly BacalhauVersion: { readonly GitVersion: string; readonly GOOS: string; readonly GOARCH: string };
  };
  readonly Membership: Membership;
  readonly Connection: "CONNECTED" | "DISCONNECTED";
  readonly ConnectionState: { readonly LastHeartbeat: string | null };
  readonly Health: Health;
  readonly Drain?: {
    readonly Status: DrainStatus;
    readonly Deadline: string;
    readonly Reason: string;
    readonly By: ActorRef;
    readonly StartedAt: string;
    readonly EndedAt?: string;
    readonly Left?: number;
    /** While draining: the executions the orchestrator counts as under way on the node (absent from older servers). */
    readonly ExecutionsLeft?: number;
  };
  readonly Revision: number;
  readonly Cordoned: boolean;
  readonly Cordon?: { readonly Reason: string; readonly By: ActorRef; readonly Since: string };
  readonly ReportedLabels: Readonly<Record<string, string>>;
  readonly OperatorLabels: { readonly Set: Readonly<Record<string, string>>; readonly Removed: readonly string[] };
}

export interface ListNodesResponse {
  readonly Nodes: readonly NodeState[];
  readonly NextToken: string;
}

/** A stored event as the history and the event stream send it: the server's own type (types only, no code). */
export type ClusterEvent = typeof ClusterEventJson.Type;

/** Bacalhau's models.Job, models.Execution and models.JobHistory as the job routes send them (the server's types). */
export type Job = JobJson;
export type Execution = ExecutionJson;
export type JobHistoryEntry = typeof JobHistoryJson.Type;
export type JobStateName = Job["State"]["StateType"];

export interface Page<T> {
  readonly Items: readonly T[];
  readonly NextToken: string;
}

/** One line of a job's logs (Type 1 stdout, 2 stderr), or the error that ended the stream. */
export interface LogMessage {
  readonly value: { readonly Type: 0 | 1 | 2; readonly Line: string };
  readonly error?: string;
}

/** One problem of a refused job spec: the field path and what is wrong there (the 400's Details.problems). */
export interface SpecProblem {
  readonly path: string;
  readonly message: string;
}
