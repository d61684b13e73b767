import type { NodeInfo } from "../../src/events/catalog/node-info.ts";

/** What may be asked of a node. Times and timeouts come from the host: the machine has no clock. */
export type NodeCommand =
  /** `publicKey`: the key a compute node joins with (the orchestrator's own registration has none). */
  | { readonly type: "Register"; readonly info: NodeInfo; readonly manualApproval: boolean; readonly publicKey?: string }
  | { readonly type: "UpdateInfo"; readonly info: NodeInfo }
  | { readonly type: "Approve" }
  | { readonly type: "Reject" }
  | { readonly type: "Delete" }
  | { readonly type: "MarkUnhealthy"; readonly lastHeartbeat: string | null; readonly disconnectTimeoutMs: number }
  | { readonly type: "MarkUnknown"; readonly lastHeartbeat: string | null; readonly unknownTimeoutMs: number }
  | { readonly type: "MarkHealthy" }
  /** An operator drains the node: `deadline` is absolute (the host's clock plus the operator's duration). */
  | { readonly type: "Drain"; readonly deadline: string; readonly keepDaemon: boolean; readonly reason: string; readonly by: string }
  /** An operator ends a drain under way, or lets a drained node take work again (Nomad's `node drain -disable`). */
  | { readonly type: "Undrain" }
  /** The drain workflow: nothing it had to move is left on the node. `daemonStopped`: daemon executions it stopped at the end. */
  | { readonly type: "CompleteDrain"; readonly daemonStopped: number }
  /** The drain's deadline passed with these executions still on the node: they are stopped, and the drain ends. */
  | { readonly type: "ExpireDrain"; readonly left: readonly DrainLeftover[] };

/** An execution a drain's deadline found still on the node. */
export interface DrainLeftover {
  readonly executionId: string;
  readonly jobId: string;
  readonly jobType: string;
}

/** Why a command was refused. The host maps these onto its closed set of errors. */
export type NodeRefusal =
  | { readonly code: "NotFound"; readonly message: string }
  | { readonly code: "Conflict"; readonly message: string }
  | { readonly code: "Rejected"; readonly message: string };
