import { Schema } from "effect";
import { NODE_ID_PATTERN, NODE_ID_RULE } from "./node-id.ts";
import { MAX_LABELS, labelsProblem } from "../../labels/label-rule.ts";

/** Node ids travel as NATS subject tokens and stream names: no dots, spaces or wildcards (see node-id.ts). */
export const NodeId = Schema.String.pipe(Schema.pattern(NODE_ID_PATTERN, { message: () => NODE_ID_RULE }));

export const NodeType = Schema.Literal("Compute", "Requester");
export type NodeType = typeof NodeType.Type;

export const Membership = Schema.Literal("PENDING", "APPROVED", "REJECTED");
export type Membership = typeof Membership.Type;

export const Health = Schema.Literal("HEALTHY", "UNHEALTHY", "UNKNOWN");
export type Health = typeof Health.Type;

const NonNegative = Schema.Number.pipe(Schema.finite(), Schema.nonNegative());
const Count = Schema.Number.pipe(Schema.int(), Schema.nonNegative());

/** Bacalhau's models.Resources: CPU in cores, Memory and Disk in bytes, GPU as a count. */
export const Resources = Schema.Struct({
  CPU: Schema.optional(NonNegative),
  Memory: Schema.optional(NonNegative),
  Disk: Schema.optional(NonNegative),
  GPU: Schema.optional(Count),
});
export type Resources = typeof Resources.Type;

const Name = Schema.String.pipe(Schema.maxLength(256));
const LabelMap = Schema.Record({
  key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(253)),
  value: Schema.String.pipe(Schema.maxLength(63)),
});

/** The static part of Bacalhau's ComputeNodeInfo; live capacities travel separately. */
export const ComputeNodeInfo = Schema.Struct({
  ExecutionEngines: Schema.Array(Name).pipe(Schema.maxItems(64)),
  Publishers: Schema.Array(Name).pipe(Schema.maxItems(64)),
  StorageSources: Schema.Array(Name).pipe(Schema.maxItems(64)),
  MaxCapacity: Resources,
  MaxJobRequirements: Resources,
});
export type ComputeNodeInfo = typeof ComputeNodeInfo.Type;

export const BuildVersion = Schema.Struct({
  GitVersion: Name,
  GOOS: Name,
  GOARCH: Name,
});

/**
 * NodeInfo as stored in events (NodeRegistered, NodeInfoUpdated). NEVER tighten this schema:
 * every event an earlier Shoal accepted must stay readable. New limits go into NodeInfo below,
 * which guards what enters Shoal.
 */
export const StoredNodeInfo = Schema.Struct({
  NodeID: NodeId,
  NodeType,
  Hostname: Name,
  Labels: LabelMap,
  ComputeNodeInfo: Schema.optional(ComputeNodeInfo),
  BacalhauVersion: BuildVersion,
});

/** Limits on a node's report about itself, far below the 64 KiB message cap (docs/security.md). */
export const NODE_INFO_LIMITS = {
  /** The whole NodeInfo as stored (JSON, UTF-8). */
  maxBytes: 16 * 1024,
  /** A DNS name's maximum. */
  maxHostnameLength: 253,
  /** ExecutionEngines, Publishers, StorageSources: entries each, and characters per entry. */
  maxListItems: 32,
  maxListItemLength: 64,
} as const;

const ListItem = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(NODE_INFO_LIMITS.maxListItemLength));
const List = Schema.Array(ListItem).pipe(Schema.maxItems(NODE_INFO_LIMITS.maxListItems));

/** Kubernetes' label rule and the label cap (src/labels/label-rule.ts). */
const Labels = Schema.Record({ key: Schema.String, value: Schema.String }).pipe(
  Schema.filter((labels) => labelsProblem(labels) ?? true, {
    title: "Labels",
    jsonSchema: { maxProperties: MAX_LABELS, description: "Kubernetes label keys and values" },
  }),
);

const encodedBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

const withinSize = (info: unknown) => {
  const bytes = encodedBytes(info);
  return (
    bytes <= NODE_INFO_LIMITS.maxBytes ||
    `node info is ${bytes} bytes encoded; the limit is ${NODE_INFO_LIMITS.maxBytes}`
  );
};

/**
 * What a node says about itself (Bacalhau's models.NodeInfo, static fields only), as it may
 * enter Shoal: every value it accepts is also a valid StoredNodeInfo. The titles keep refusal
 * reasons short (they stand for the whole struct in them).
 */
export const NodeInfo = Schema.Struct({
  NodeID: NodeId,
  NodeType,
  Hostname: Schema.String.pipe(Schema.maxLength(NODE_INFO_LIMITS.maxHostnameLength)),
  Labels,
  ComputeNodeInfo: Schema.optional(
    Schema.Struct({
      ExecutionEngines: List,
      Publishers: List,
      StorageSources: List,
      MaxCapacity: Resources,
      MaxJobRequirements: Resources,
    }).annotations({ title: "ComputeNodeInfo" }),
  ),
  BacalhauVersion: BuildVersion,
})
  .annotations({ title: "NodeInfo" })
  .pipe(Schema.filter(withinSize, { title: "NodeInfo", jsonSchema: {} }));
export type NodeInfo = typeof StoredNodeInfo.Type;

/** Transient capacity report; kept in memory only, never an event. */
export const ResourceReport = Schema.Struct({
  AvailableCapacity: Resources,
  QueueUsedCapacity: Resources,
  RunningExecutions: Count,
  EnqueuedExecutions: Count,
});
export type ResourceReport = typeof ResourceReport.Type;
