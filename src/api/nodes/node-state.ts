import { Schema } from "effect";
import type { LiveView } from "../../actors/node-manager.ts";
import type { ResourceReport } from "../../events/catalog/node-info.ts";
import {
  BuildVersion,
  ComputeNodeInfo,
  Health,
  Membership,
  NodeType,
  Resources,
  StoredNodeInfo,
} from "../../events/catalog/node-info.ts";
import type { NodeDrain } from "../../../machines/node/node-state.ts";
import { nodeLabels } from "../../labels/node-labels.ts";
import type { NodeView } from "../../projections/node-view.ts";

const ResourcesComponent = Resources.annotations({ identifier: "Resources" });
const Count = Schema.Number.pipe(Schema.int(), Schema.nonNegative());
const Time = Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } });
const Connection = Schema.Literal("CONNECTED", "DISCONNECTED");

/**
 * What toNodeState returns, as a schema: the OpenAPI document's NodeState, and what the REST
 * tests decode real responses with. Info is the stored info (never tightened), not what a node
 * may send today.
 */
export const NodeStateResponse = Schema.Struct({
  Info: Schema.Struct({
    NodeID: StoredNodeInfo.fields.NodeID,
    NodeType,
    Hostname: StoredNodeInfo.fields.Hostname,
    Labels: StoredNodeInfo.fields.Labels,
    ComputeNodeInfo: Schema.optional(
      Schema.Struct({
        ...ComputeNodeInfo.fields,
        MaxCapacity: ResourcesComponent,
        MaxJobRequirements: ResourcesComponent,
        AvailableCapacity: ResourcesComponent,
        QueueCapacity: ResourcesComponent,
        RunningExecutions: Count,
        EnqueuedExecutions: Count,
      }),
    ),
    BacalhauVersion: BuildVersion,
  }),
  Membership,
  Connection,
  ConnectionState: Schema.Struct({
    Status: Connection,
    // OpenAPI 3.0 has no null type: nullable is its way of saying "string or null".
    LastHeartbeat: Schema.NullOr(Schema.String).annotations({
      jsonSchema: { type: "string", format: "date-time", nullable: true },
    }),
    ConnectedSince: Schema.optional(Time),
    DisconnectedSince: Schema.optional(Time),
  }),
  Health,
  /** Shoal: the operator's drain, while it runs and after it ended until an undrain (docs/nodes.md, Drain). */
  Drain: Schema.optional(
    Schema.Struct({
      Status: Schema.Literal("draining", "drained", "expired"),
      Deadline: Time,
      KeepDaemon: Schema.Boolean,
      Reason: Schema.String,
      By: Schema.Struct({ type: Schema.String, id: Schema.String }),
      StartedAt: Time,
      EndedAt: Schema.optional(Time),
      /** How many executions the deadline stopped (expired). */
      Left: Schema.optional(Count),
      /**
       * While draining, on a live read: how many executions the orchestrator counts as under way on the node (the job
       * read model the drain decides from), not the node's last resource report. Absent as of a past moment.
       */
      ExecutionsLeft: Schema.optional(Count),
    }).annotations({ identifier: "NodeDrain" }),
  ),
  Revision: Count,
  /** Shoal's: no new placements on the node while true (shoal node cordon). */
  Cordoned: Schema.Boolean,
  Cordon: Schema.optional(
    Schema.Struct({
      Reason: Schema.String,
      By: Schema.Struct({ type: Schema.String, id: Schema.String }),
      Since: Time,
    }).annotations({ identifier: "NodeCordon" }),
  ),
  /** What the node reports about itself; Info.Labels are the effective labels (these overlaid by OperatorLabels). */
  ReportedLabels: StoredNodeInfo.fields.Labels,
  /** The operator's labels (shoal node label): Set overrides or adds, Removed hides the node's own. */
  OperatorLabels: Schema.Struct({
    Set: Schema.Record({ key: Schema.String, value: Schema.String }),
    Removed: Schema.Array(Schema.String),
  }).annotations({
    identifier: "OperatorLabels",
  }),
}).annotations({ identifier: "NodeState" });

/** Bacalhau's models.NodeState, plus Shoal's Health and Revision: the shape the schema above declares. */
export type NodeState = typeof NodeStateResponse.Type;

const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

/**
 * ConnectionState.LastHeartbeat: the last heartbeat this process received (for its own node, its start), else the one
 * the last UNHEALTHY/UNKNOWN event recorded. Live: it changes without an event (node-state-json.ts).
 */
export const lastHeartbeatOf = (view: NodeView, live: LiveView | undefined): string | null =>
  iso(live?.lastHeartbeat) ?? view.lastHeartbeatAtChange;

/** ComputeNodeInfo's live fields, from the node's last resource report (also live: no event moves them). */
export interface LiveCapacity {
  readonly AvailableCapacity: Resources;
  readonly QueueCapacity: Resources;
  readonly RunningExecutions: number;
  readonly EnqueuedExecutions: number;
}

export function liveCapacityOf(resources: ResourceReport | undefined): LiveCapacity {
  return {
    // Until the node reports resources, nothing is known to be available.
    AvailableCapacity: resources?.AvailableCapacity ?? {},
    QueueCapacity: resources?.QueueUsedCapacity ?? {},
    RunningExecutions: resources?.RunningExecutions ?? 0,
    EnqueuedExecutions: resources?.EnqueuedExecutions ?? 0,
  };
}

const NO_OPERATOR_LABELS = { Set: {}, Removed: [] } as const;

function operatorLabelsOf(view: NodeView): NodeState["OperatorLabels"] {
  const keys = Object.keys(view.labelOverrides);
  if (keys.length === 0) return NO_OPERATOR_LABELS;
  const set: Record<string, string> = {};
  const removed: string[] = [];
  for (const key of keys.sort()) {
    const value = view.labelOverrides[key];
    if (value === null || value === undefined) removed.push(key);
    else set[key] = value;
  }
  return { Set: set, Removed: removed };
}

/**
 * `underWay`: how many executions the orchestrator counts as under way on the node (Drain.ExecutionsLeft while it
 * drains); undefined where nothing is live (a past moment).
 *
 * Built field by field, not by spreading the stored info: spreading objects that came out of a
 * schema decode took V8's slow path, 25 times the cost of these literals, and a page of 100
 * nodes paid it per request. A field added to StoredNodeInfo must be added here too (the
 * type requires it; test/unit/projections/node-index.test.ts checks that no field is dropped).
 */
export function toNodeState(view: NodeView, live: LiveView | undefined, underWay?: number): NodeState {
  const status = view.health === "HEALTHY" ? "CONNECTED" : "DISCONNECTED";
  const stored = view.info;
  const compute = stored.ComputeNodeInfo;
  const capacity = liveCapacityOf(live?.resources);
  const labels = nodeLabels(view);
  const info: NodeState["Info"] = compute
    ? {
        NodeID: stored.NodeID,
        NodeType: stored.NodeType,
        Hostname: stored.Hostname,
        Labels: labels,
        BacalhauVersion: stored.BacalhauVersion,
        ComputeNodeInfo: {
          ExecutionEngines: compute.ExecutionEngines,
          Publishers: compute.Publishers,
          StorageSources: compute.StorageSources,
          MaxCapacity: compute.MaxCapacity,
          MaxJobRequirements: compute.MaxJobRequirements,
          AvailableCapacity: capacity.AvailableCapacity,
          QueueCapacity: capacity.QueueCapacity,
          RunningExecutions: capacity.RunningExecutions,
          EnqueuedExecutions: capacity.EnqueuedExecutions,
        },
      }
    : {
        NodeID: stored.NodeID,
        NodeType: stored.NodeType,
        Hostname: stored.Hostname,
        Labels: labels,
        BacalhauVersion: stored.BacalhauVersion,
      };
  const lastHeartbeat = lastHeartbeatOf(view, live);
  return {
    Info: info,
    Membership: view.membership,
    Connection: status,
    ConnectionState:
      status === "CONNECTED"
        ? { Status: status, LastHeartbeat: lastHeartbeat, ConnectedSince: view.healthSince }
        : { Status: status, LastHeartbeat: lastHeartbeat, DisconnectedSince: view.healthSince },
    Health: view.health,
    ...(view.drain === undefined ? {} : { Drain: drainJson(view.drain, underWay) }),
    Revision: view.revision,
    Cordoned: view.cordon !== undefined,
    ...(view.cordon === undefined
      ? {}
      : { Cordon: { Reason: view.cordon.reason, By: view.cordon.by, Since: view.cordon.since } }),
    ReportedLabels: stored.Labels,
    OperatorLabels: operatorLabelsOf(view),
  };
}

/** `underWay`: the orchestrator's count of the node's executions under way, shown while the drain runs. */
function drainJson(d: NodeDrain, underWay: number | undefined): NonNullable<NodeState["Drain"]> {
  return {
    Status: d.status,
    Deadline: d.deadline,
    KeepDaemon: d.keepDaemon,
    Reason: d.reason,
    By: d.by,
    StartedAt: d.startedAt,
    ...(d.endedAt === undefined ? {} : { EndedAt: d.endedAt }),
    ...(d.left === undefined ? {} : { Left: d.left }),
    ...(underWay === undefined || d.status !== "draining" ? {} : { ExecutionsLeft: underWay }),
  };
}
