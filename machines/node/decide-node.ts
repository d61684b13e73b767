import { accept, refuse, type Decision } from "../decider.ts";
import type { NodeEvent, NodeEventType } from "../../src/events/catalog/node-events.ts";
import type { NodeInfo } from "../../src/events/catalog/node-info.ts";
import { overridden } from "./evolve-node.ts";
import { changedInfoFields } from "./info-diff.ts";
import { nodeChartIndex, nodeTransitions } from "./node-chart.ts";
import type { NodeCommand, NodeRefusal } from "./node-commands.ts";
import type { NodeState } from "./node-state.ts";

export type NodeDecision = Decision<NodeEvent, NodeRefusal>;

function infoUpdate(state: NodeState, info: NodeInfo): NodeEvent[] {
  const before = state.info;
  if (!before) return [];
  const changed = changedInfoFields(before, info);
  return changed.length === 0
    ? []
    : [{ type: "NodeInfoUpdated", data: { NodeID: state.nodeId, Info: info, Changed: changed } }];
}

/** Whether an operator pre-authorised this node id, for the key it joins with. */
function preauthorized(state: NodeState, publicKey: string | undefined): boolean {
  const pre = state.preauthorization;
  return pre !== undefined && (pre.publicKey === undefined || pre.publicKey === publicKey);
}

/** Why a label change is not one, or undefined: a key both set and hidden is a contradiction, not a choice. */
function labelChangeProblem(command: Extract<NodeCommand, { type: "SetLabels" }>): string | undefined {
  const removed = new Set(command.remove);
  const reset = new Set(command.reset);
  for (const key of Object.keys(command.set)) {
    if (removed.has(key)) return `label ${key} is both set and removed`;
    if (reset.has(key)) return `label ${key} is both set and reset`;
  }
  for (const key of removed) if (reset.has(key)) return `label ${key} is both removed and reset`;
  if (Object.keys(command.set).length + removed.size + reset.size === 0) return "no label to set, remove or reset";
  return undefined;
}

function sameOverrides(a: NodeState["labelOverrides"], b: NodeState["labelOverrides"]): boolean {
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k])
  );
}

function revoke(state: NodeState, reason: "rejected" | "deleted"): NodeEvent[] {
  const held = state.credential;
  return held?.active
    ? [{ type: "NodeCredentialRevoked", data: { NodeID: state.nodeId, PublicKey: held.publicKey, Reason: reason } }]
    : [];
}

/**
 * The event a command causes: what the chart is asked about before anything else is checked. A
 * registered node that registers again reports its info again.
 */
function causes(command: NodeCommand, state: NodeState): NodeEventType {
  switch (command.type) {
    case "Register":
      return state.registered ? "NodeInfoUpdated" : "NodeRegistered";
    case "UpdateInfo":
      return "NodeInfoUpdated";
    case "Approve":
      return "NodeApproved";
    case "Reject":
      return "NodeRejected";
    case "Delete":
      return "NodeDeleted";
    case "MarkUnhealthy":
      return "NodeBecameUnhealthy";
    case "MarkUnknown":
      return "NodeBecameUnknown";
    case "MarkHealthy":
      return "NodeBecameHealthy";
    case "Cordon":
      return "NodeCordoned";
    case "Uncordon":
      return "NodeUncordoned";
    case "SetLabels":
      return "NodeLabelsSet";
    case "Preauthorize":
      return "NodePreauthorized";
    case "RevokePreauthorization":
      return "NodePreauthorizationRevoked";
    case "Drain":
      return "NodeDrainStarted";
    case "Undrain":
      return "NodeUndrained";
    case "CompleteDrain":
      return "NodeDrainCompleted";
    case "ExpireDrain":
      return "NodeDrainDeadlineReached";
  }
}

/**
 * What an orchestrator's node refuses whatever its state: it takes no placements, has no work to
 * move, and is not the operators' to reject. Its node type is data, not a state. A delete is
 * refused only while it is HEALTHY (the orchestrator runs): a stopped or dead one is cleaned up as
 * a compute node is.
 */
const NOT_FOR_THE_ORCHESTRATOR: ReadonlySet<NodeCommand["type"]> = new Set([
  "Reject",
  "Cordon",
  "Uncordon",
  "SetLabels",
  "Drain",
]);

/** Why an operator's or a node's command is not legal in this state (the statechart says only that it is not). */
function refusal(command: NodeCommand, state: NodeState): NodeRefusal {
  const { nodeId } = state;
  if (!state.registered) {
    return {
      code: "NotFound",
      message: command.type === "UpdateInfo" ? `node not registered: ${nodeId}` : `node not found: ${nodeId}`,
    };
  }
  switch (command.type) {
    case "Preauthorize":
      return {
        code: "Conflict",
        message: `node ${nodeId} is already registered (${state.membership ?? "PENDING"}); approve it instead of pre-authorising it`,
      };
    case "Cordon":
    case "Uncordon":
      return {
        code: "Conflict",
        message: `node ${nodeId} is the orchestrator and takes no placements: it cannot be cordoned or uncordoned`,
      };
    case "SetLabels":
      return {
        code: "Conflict",
        message: `node ${nodeId} is the orchestrator and takes no placements: its labels cannot be set`,
      };
    case "Register":
      return { code: "Rejected", message: "node has been rejected" };
    case "UpdateInfo":
      return { code: "Rejected", message: "node registration rejected" };
    case "Approve":
      return { code: "Conflict", message: `node ${nodeId} already approved` };
    case "Reject":
      return state.nodeType === "Requester"
        ? { code: "Conflict", message: `node ${nodeId} is the orchestrator and cannot be rejected` }
        : { code: "Conflict", message: `node ${nodeId} already rejected` };
    case "Drain":
      return { code: "Conflict", message: `node ${nodeId} is the orchestrator and cannot be drained` };
    default:
      return { code: "Conflict", message: `node ${nodeId}: ${command.type} does not apply in its state` };
  }
}

/**
 * The node's rules: given a command and the node's state, which events happen, or why not.
 * Whether a command may happen at all is the chart's answer for the event it causes, and not for
 * the orchestrator's own node where NOT_FOR_THE_ORCHESTRATOR says so; health commands
 * that no longer apply (the node already changed) are no-ops, never refusals, since the host
 * issues them from deadlines that may have raced a heartbeat.
 */
export function decideNode(command: NodeCommand, state: NodeState): NodeDecision {
  const { nodeId } = state;
  const health =
    command.type === "MarkHealthy" ||
    command.type === "MarkUnhealthy" ||
    command.type === "MarkUnknown" ||
    command.type === "CompleteDrain" ||
    command.type === "ExpireDrain";
  if (command.type === "Register" && command.info.NodeID !== nodeId) {
    return refuse({ code: "Conflict", message: `node info is for ${command.info.NodeID}, not ${nodeId}` });
  }
  const legal =
    nodeTransitions.allows(nodeChartIndex(state), causes(command, state)) &&
    !(state.nodeType === "Requester" && NOT_FOR_THE_ORCHESTRATOR.has(command.type));
  if (!legal) return health ? accept([]) : refuse(refusal(command, state));
  if (command.type === "Delete" && state.nodeType === "Requester" && (state.health ?? "HEALTHY") === "HEALTHY")
    return refuse({
      code: "Conflict",
      message:
        `node ${nodeId} is a running orchestrator (HEALTHY) and cannot be deleted: stop it first; ` +
        "its node turns UNHEALTHY, and can then be deleted",
    });

  switch (command.type) {
    case "Register": {
      const bind = (publicKey: string): NodeEvent => ({
        type: "NodeCredentialBound",
        data: { NodeID: nodeId, PublicKey: publicKey, Reinstated: false },
      });
      if (!state.registered) {
        const approved =
          command.info.NodeType === "Requester" || !command.manualApproval || preauthorized(state, command.publicKey);
        const registered: NodeEvent = {
          type: "NodeRegistered",
          data: {
            NodeID: nodeId,
            NodeType: command.info.NodeType,
            Info: command.info,
            Membership: approved ? "APPROVED" : "PENDING",
            Lifecycle: state.lifecycle + 1,
          },
        };
        const note =
          approved && command.manualApproval && command.info.NodeType !== "Requester"
            ? "node registered (pre-authorised)"
            : "node registered";
        return accept(command.publicKey === undefined ? [registered] : [registered, bind(command.publicKey)], note);
      }
      if (command.info.NodeType !== state.nodeType) {
        return refuse({
          code: "Conflict",
          message: `node ${nodeId} is registered as ${state.nodeType}, not ${command.info.NodeType}`,
        });
      }
      const held = state.credential;
      if (command.publicKey !== undefined && held?.active && held.publicKey !== command.publicKey) {
        // One key per node id: whoever holds the join token may not take over a live node's identity.
        return refuse({
          code: "Conflict",
          message: `node ${nodeId} is already bound to another key; an operator must delete the node before it can join with a new one`,
        });
      }
      const binding = command.publicKey !== undefined && !held?.active ? [bind(command.publicKey)] : [];
      return accept([...binding, ...infoUpdate(state, command.info)], "node already registered");
    }
    case "UpdateInfo":
      if (command.info.NodeID !== nodeId || command.info.NodeType !== state.nodeType) {
        return refuse({
          code: "Conflict",
          message: `node info does not match registered node ${nodeId} (${state.nodeType})`,
        });
      }
      return accept(infoUpdate(state, command.info));
    case "Approve": {
      // The key a reject revoked is let in again: the node comes back without re-joining.
      const held = state.credential;
      const reinstate: NodeEvent[] =
        held && !held.active
          ? [{ type: "NodeCredentialBound", data: { NodeID: nodeId, PublicKey: held.publicKey, Reinstated: true } }]
          : [];
      return accept([
        { type: "NodeApproved", data: { NodeID: nodeId, Previous: state.membership ?? "PENDING" } },
        ...reinstate,
      ]);
    }
    case "Reject":
      return accept([
        { type: "NodeRejected", data: { NodeID: nodeId, Previous: state.membership ?? "PENDING" } },
        ...revoke(state, "rejected"),
      ]);
    case "Delete":
      // Revoked before the delete: a deleted node has no credential to revoke.
      return accept([
        ...revoke(state, "deleted"),
        { type: "NodeDeleted", data: { NodeID: nodeId, Membership: state.membership ?? "PENDING" } },
      ]);
    case "MarkUnhealthy":
      return accept([
        {
          type: "NodeBecameUnhealthy",
          data: {
            NodeID: nodeId,
            LastHeartbeat: command.lastHeartbeat,
            DisconnectTimeoutMs: command.disconnectTimeoutMs,
          },
        },
      ]);
    case "MarkUnknown":
      return accept([
        {
          type: "NodeBecameUnknown",
          data: { NodeID: nodeId, LastHeartbeat: command.lastHeartbeat, UnknownTimeoutMs: command.unknownTimeoutMs },
        },
      ]);
    case "MarkHealthy":
      return accept([{ type: "NodeBecameHealthy", data: { NodeID: nodeId, Previous: state.health ?? "UNHEALTHY" } }]);
    // Cordoning a cordoned node (or uncordoning a schedulable one) changes nothing and is not an
    // error, as with kubectl cordon and Nomad's eligibility: scripts may repeat it safely.
    case "Cordon":
      return state.cordon
        ? accept([], "node already cordoned")
        : accept([{ type: "NodeCordoned", data: { NodeID: nodeId, Reason: command.reason, By: command.by } }]);
    case "Uncordon":
      return state.cordon
        ? accept([{ type: "NodeUncordoned", data: { NodeID: nodeId, Reason: command.reason } }])
        : accept([], "node not cordoned");
    case "SetLabels": {
      const problem = labelChangeProblem(command);
      if (problem !== undefined) return refuse({ code: "Invalid", message: problem });
      const change = { Set: command.set, Removed: [...command.remove], Reset: [...command.reset] };
      if (sameOverrides(overridden(state.labelOverrides, change), state.labelOverrides))
        return accept([], "labels unchanged");
      return accept([{ type: "NodeLabelsSet", data: { NodeID: nodeId, ...change } }]);
    }
    case "Preauthorize": {
      const pre = state.preauthorization;
      if (pre && pre.publicKey === command.publicKey) return accept([], "node already pre-authorised");
      return accept([
        {
          type: "NodePreauthorized",
          data: {
            NodeID: nodeId,
            ...(command.publicKey === undefined ? {} : { PublicKey: command.publicKey }),
            Reason: command.reason,
            By: command.by,
          },
        },
      ]);
    }
    case "RevokePreauthorization":
      if (!state.preauthorization)
        return refuse({ code: "NotFound", message: `node ${nodeId} has no pre-authorisation to revoke` });
      return accept([{ type: "NodePreauthorizationRevoked", data: { NodeID: nodeId } }]);
    case "Drain":
      // A drain under way may be drained again: its deadline and daemon choice are replaced (Nomad updates the drain
      // strategy so).
      return accept([
        {
          type: "NodeDrainStarted",
          data: {
            NodeID: nodeId,
            Deadline: command.deadline,
            KeepDaemon: command.keepDaemon,
            Reason: command.reason,
            By: command.by,
          },
        },
      ]);
    case "Undrain":
      if (state.drain === undefined) return refuse({ code: "Conflict", message: `node ${nodeId} is not drained` });
      return accept([{ type: "NodeUndrained", data: { NodeID: nodeId, Previous: state.drain.status } }]);
    // The workflow's ends of a drain: no-ops once it has ended (a deadline racing the last execution's end, a replay).
    case "CompleteDrain":
      return state.drain?.status === "draining"
        ? accept([{ type: "NodeDrainCompleted", data: { NodeID: nodeId, DaemonStopped: command.daemonStopped } }])
        : accept([]);
    case "ExpireDrain": {
      const drain = state.drain;
      if (drain?.status !== "draining") return accept([]);
      const left = command.left.map((l) => ({ ExecutionID: l.executionId, JobID: l.jobId, JobType: l.jobType }));
      return accept([
        { type: "NodeDrainDeadlineReached", data: { NodeID: nodeId, Deadline: drain.deadline, Left: left } },
      ]);
    }
  }
}
