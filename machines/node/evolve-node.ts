import type { NodeEvent, NodeEventType } from "../../src/events/catalog/node-events.ts";
import type { NodeState } from "./node-state.ts";

/**
 * The event types whose fold reads nothing of their data (only their type, the state and the
 * time): a rebuild need not parse it (decodeNodeEventForFold). Kept beside evolveNode, which it
 * describes; test/unit/machines/evolve-reads-no-data.test.ts folds them with data that throws
 * when touched, from every kind of state.
 */
export const EVOLVE_READS_NO_DATA: ReadonlySet<NodeEventType> = new Set<NodeEventType>([
  "NodeApproved",
  "NodeRejected",
  "NodeDeleted",
  "NodeBecameHealthy",
  "NodeCredentialRevoked",
  "NodeDrainCompleted",
  "NodeUndrained",
]);

/**
 * Folds one stored event into a node's state: the one fold of a node stream, used by its actor
 * and by the read model alike. An event that does not fit the state (which the decider never
 * produces) leaves it as it is, so a damaged history cannot make a node up.
 */
export function evolveNode(state: NodeState, event: NodeEvent, time: string): NodeState {
  if (event.type === "NodeRegistered") {
    if (state.registered) return state;
    const d = event.data;
    return {
      ...state,
      registered: true,
      deleted: false,
      nodeType: d.NodeType,
      info: d.Info,
      membership: d.Membership,
      health: "HEALTHY",
      lifecycle: d.Lifecycle,
      registeredAt: time,
      updatedAt: time,
      healthSince: time,
      lastHeartbeatAtChange: null,
    };
  }
  if (!state.registered) return state;
  switch (event.type) {
    case "NodeApproved":
      return { ...state, membership: "APPROVED", updatedAt: time };
    case "NodeRejected":
      return { ...state, membership: "REJECTED", updatedAt: time };
    case "NodeDeleted": {
      // A drain ends with its node's lifecycle: a node registering again under the id starts undrained.
      const { drain: _ended, ...rest } = state;
      return { ...rest, registered: false, deleted: true, credential: undefined, updatedAt: time };
    }
    case "NodeInfoUpdated":
      return { ...state, info: event.data.Info, updatedAt: time };
    case "NodeBecameUnhealthy":
      return { ...state, health: "UNHEALTHY", healthSince: time, lastHeartbeatAtChange: event.data.LastHeartbeat, updatedAt: time };
    case "NodeBecameUnknown":
      return { ...state, health: "UNKNOWN", healthSince: time, lastHeartbeatAtChange: event.data.LastHeartbeat, updatedAt: time };
    case "NodeBecameHealthy":
      return { ...state, health: "HEALTHY", healthSince: time, updatedAt: time };
    case "NodeCredentialBound":
      return { ...state, credential: { publicKey: event.data.PublicKey, active: true }, updatedAt: time };
    case "NodeDrainStarted": {
      const d = event.data;
      return { ...state, drain: { status: "draining", deadline: d.Deadline, keepDaemon: d.KeepDaemon, reason: d.Reason, by: d.By, startedAt: time }, updatedAt: time };
    }
    case "NodeDrainCompleted":
      return state.drain?.status === "draining" ? { ...state, drain: { ...state.drain, status: "drained", endedAt: time }, updatedAt: time } : state;
    case "NodeDrainDeadlineReached":
      return state.drain?.status === "draining" ? { ...state, drain: { ...state.drain, status: "expired", endedAt: time, left: event.data.Left.length }, updatedAt: time } : state;
    case "NodeUndrained": {
      const { drain: _ended, ...rest } = state;
      return { ...rest, updatedAt: time };
    }
    case "NodeCredentialRevoked":
      return state.credential ? { ...state, credential: { ...state.credential, active: false }, updatedAt: time } : { ...state, updatedAt: time };
  }
}
