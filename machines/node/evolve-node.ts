import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import { nodeChartIndex, nodeTransitions } from "./node-chart.ts";
import type { LabelOverrides, NodeState } from "./node-state.ts";

/** The operator's overrides after a NodeLabelsSet: resets first, then removals, then what is set. */
export function overridden(
  before: LabelOverrides,
  change: {
    readonly Set: Readonly<Record<string, string>>;
    readonly Removed: readonly string[];
    readonly Reset: readonly string[];
  },
): LabelOverrides {
  const after: Record<string, string | null> = { ...before };
  for (const key of change.Reset) delete after[key];
  for (const key of change.Removed) after[key] = null;
  for (const [key, value] of Object.entries(change.Set)) after[key] = value;
  return after;
}

const TO = nodeTransitions.columns;

/**
 * Folds one stored event into a node's state: the one fold of a node stream, used by its actor
 * and by the read model alike. Where the node is (registered, membership, health) comes from its
 * chart (its column for the event's type, read by name: the fold is hot); this adds the event's
 * data. An event the chart does not take in the node's state (which the decider never produces)
 * leaves it as it is, so a damaged history cannot make a node up. The types whose data it reads
 * none of are decoded on read by the processors (the catalog's `nodeEvents.decodedOnRead`): reading
 * the data of one of them here makes test/unit/machines/evolve-reads-no-data.test.ts fail.
 */
export function evolveNode(state: NodeState, event: NodeEvent, time: string): NodeState {
  const from = nodeChartIndex(state);
  switch (event.type) {
    case "NodeRegistered": {
      const to = nodeTransitions.choices.NodeRegistered[from]?.pick(state, event);
      if (to === undefined) return state;
      const d = event.data;
      return {
        ...state,
        registered: to.registered,
        deleted: false,
        nodeType: d.NodeType,
        info: d.Info,
        membership: to.membership,
        health: to.health,
        lifecycle: d.Lifecycle,
        registeredAt: time,
        updatedAt: time,
        healthSince: time,
        lastHeartbeatAtChange: null,
      };
    }
    // A pre-authorisation comes before the node exists (and outlives nothing: a delete clears it).
    case "NodePreauthorized": {
      if (TO.NodePreauthorized[from] === undefined) return state;
      const d = event.data;
      return { ...state, preauthorization: { publicKey: d.PublicKey, reason: d.Reason, by: d.By, at: time } };
    }
    case "NodePreauthorizationRevoked":
      if (TO.NodePreauthorizationRevoked[from] === undefined) return state;
      return state.preauthorization ? { ...state, preauthorization: undefined } : state;
    case "NodeApproved": {
      const to = TO.NodeApproved[from];
      return to === undefined ? state : { ...state, membership: to.membership, updatedAt: time };
    }
    case "NodeRejected": {
      const to = TO.NodeRejected[from];
      return to === undefined ? state : { ...state, membership: to.membership, updatedAt: time };
    }
    case "NodeDeleted": {
      const to = TO.NodeDeleted[from];
      if (to === undefined) return state;
      // A node deleted and joining again starts afresh: no cordon, no operator labels, no pre-authorisation, undrained.
      const { drain: _ended, ...rest } = state;
      return {
        ...rest,
        registered: to.registered,
        deleted: true,
        credential: undefined,
        cordon: undefined,
        labelOverrides: {},
        preauthorization: undefined,
        updatedAt: time,
      };
    }
    case "NodeInfoUpdated":
      if (TO.NodeInfoUpdated[from] === undefined) return state;
      return { ...state, info: event.data.Info, updatedAt: time };
    case "NodeBecameUnhealthy": {
      const to = TO.NodeBecameUnhealthy[from];
      if (to === undefined) return state;
      const lastHeartbeatAtChange = event.data.LastHeartbeat;
      return { ...state, health: to.health, healthSince: time, lastHeartbeatAtChange, updatedAt: time };
    }
    case "NodeBecameUnknown": {
      const to = TO.NodeBecameUnknown[from];
      if (to === undefined) return state;
      const lastHeartbeatAtChange = event.data.LastHeartbeat;
      return { ...state, health: to.health, healthSince: time, lastHeartbeatAtChange, updatedAt: time };
    }
    case "NodeBecameHealthy": {
      const to = TO.NodeBecameHealthy[from];
      return to === undefined ? state : { ...state, health: to.health, healthSince: time, updatedAt: time };
    }
    case "NodeCredentialBound":
      if (TO.NodeCredentialBound[from] === undefined) return state;
      return { ...state, credential: { publicKey: event.data.PublicKey, active: true }, updatedAt: time };
    case "NodeDrainStarted": {
      if (TO.NodeDrainStarted[from] === undefined) return state;
      const d = event.data;
      return {
        ...state,
        drain: {
          status: "draining",
          deadline: d.Deadline,
          keepDaemon: d.KeepDaemon,
          reason: d.Reason,
          by: d.By,
          startedAt: time,
        },
        updatedAt: time,
      };
    }
    case "NodeDrainCompleted":
      return TO.NodeDrainCompleted[from] !== undefined && state.drain?.status === "draining"
        ? { ...state, drain: { ...state.drain, status: "drained", endedAt: time }, updatedAt: time }
        : state;
    case "NodeDrainDeadlineReached":
      return TO.NodeDrainDeadlineReached[from] !== undefined && state.drain?.status === "draining"
        ? {
            ...state,
            drain: { ...state.drain, status: "expired", endedAt: time, left: event.data.Left.length },
            updatedAt: time,
          }
        : state;
    case "NodeUndrained": {
      if (TO.NodeUndrained[from] === undefined) return state;
      const { drain: _ended, ...rest } = state;
      return { ...rest, updatedAt: time };
    }
    case "NodeCredentialRevoked":
      if (TO.NodeCredentialRevoked[from] === undefined) return state;
      return state.credential
        ? { ...state, credential: { ...state.credential, active: false }, updatedAt: time }
        : { ...state, updatedAt: time };
    case "NodeCordoned":
      if (TO.NodeCordoned[from] === undefined) return state;
      return { ...state, cordon: { reason: event.data.Reason, by: event.data.By, since: time }, updatedAt: time };
    case "NodeUncordoned":
      if (TO.NodeUncordoned[from] === undefined) return state;
      return { ...state, cordon: undefined, updatedAt: time };
    case "NodeLabelsSet":
      if (TO.NodeLabelsSet[from] === undefined) return state;
      return { ...state, labelOverrides: overridden(state.labelOverrides, event.data), updatedAt: time };
  }
}
