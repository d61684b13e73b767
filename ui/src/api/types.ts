// The API's JSON as the console reads it (openapi.json has the full schemas: NodeState, ClusterEvent, Whoami).

export type Capability =
  "read:node" | "write:node" | "read:job" | "write:job" | "read:agent" | "write:agent" | "read:history";

export interface Whoami {
  readonly Id?: string;
  readonly Anonymous: boolean;
  readonly Capabilities: readonly Capability[];
  readonly AnonymousAccess: "read" | "none";
}

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

export interface ClusterEvent {
  readonly id: string;
  readonly type: string;
  readonly stream: string;
  readonly revision: number;
  readonly position: number;
  readonly time: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly metadata: { readonly time: string; readonly actor: ActorRef; readonly reason?: string };
}

export interface HistoryResponse {
  readonly Items: readonly ClusterEvent[];
  readonly NextToken: string;
}
