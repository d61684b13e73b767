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
  | { readonly type: "MarkHealthy" };

/** Why a command was refused. The host maps these onto its closed set of errors. */
export type NodeRefusal =
  | { readonly code: "NotFound"; readonly message: string }
  | { readonly code: "Conflict"; readonly message: string }
  | { readonly code: "Rejected"; readonly message: string };
