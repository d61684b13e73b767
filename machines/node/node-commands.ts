import type { Actor } from "../../src/events/catalog/event-metadata.ts";
import type { NodeInfo } from "../../src/events/catalog/node-info.ts";

/** What may be asked of a node. Times and timeouts come from the host: the machine has no clock. */
export type NodeCommand =
  /** `publicKey`: the key a compute node joins with (the orchestrator's own registration has none). */
  | {
      readonly type: "Register";
      readonly info: NodeInfo;
      readonly manualApproval: boolean;
      readonly publicKey?: string;
    }
  | { readonly type: "UpdateInfo"; readonly info: NodeInfo }
  | { readonly type: "Approve" }
  | { readonly type: "Reject" }
  | { readonly type: "Delete" }
  | { readonly type: "MarkUnhealthy"; readonly lastHeartbeat: string | null; readonly disconnectTimeoutMs: number }
  | { readonly type: "MarkUnknown"; readonly lastHeartbeat: string | null; readonly unknownTimeoutMs: number }
  | { readonly type: "MarkHealthy" }
  /** No new placements on the node; `by` is who asks (kept in the node's state, as the reason is). */
  | { readonly type: "Cordon"; readonly reason: string; readonly by: Actor }
  | { readonly type: "Uncordon"; readonly reason: string }
  /**
   * The operator's labels: `set` overrides or adds, `remove` hides a label (the node's own too),
   * `reset` drops the operator's override of a key so that the node's own value shows again.
   */
  | {
      readonly type: "SetLabels";
      readonly set: Readonly<Record<string, string>>;
      readonly remove: readonly string[];
      readonly reset: readonly string[];
    }
  /** Let this node id in APPROVED on registration even under manual approval (only with `publicKey`, when given). */
  | { readonly type: "Preauthorize"; readonly publicKey?: string; readonly reason: string; readonly by: Actor }
  | { readonly type: "RevokePreauthorization" }
  /** An operator drains the node: `deadline` is absolute (the host's clock plus the operator's duration). */
  | {
      readonly type: "Drain";
      readonly deadline: string;
      readonly keepDaemon: boolean;
      readonly reason: string;
      readonly by: Actor;
    }
  /** An operator ends a drain under way, or lets a drained node take work again (Nomad's `node drain -disable`). */
  | { readonly type: "Undrain" }
  /**
   * The drain workflow: nothing it had to move is left on the node. `daemonStopped`: daemon
   * executions it stopped at the end.
   */
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
  | { readonly code: "Rejected"; readonly message: string }
  | { readonly code: "Invalid"; readonly message: string };
