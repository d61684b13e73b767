import { Schema } from "effect";
import { NODE_ID_PATTERN, NODE_ID_RULE } from "./node-id.ts";

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
const LabelMap = Schema.Record({ key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(253)), value: Schema.String.pipe(Schema.maxLength(63)) });

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

/** What a node says about itself (Bacalhau's models.NodeInfo, static fields only). */
export const NodeInfo = Schema.Struct({
  NodeID: NodeId,
  NodeType,
  Hostname: Name,
  Labels: LabelMap,
  ComputeNodeInfo: Schema.optional(ComputeNodeInfo),
  BacalhauVersion: BuildVersion,
});
export type NodeInfo = typeof NodeInfo.Type;

/** Transient capacity report; kept in memory only, never an event. */
export const ResourceReport = Schema.Struct({
  AvailableCapacity: Resources,
  QueueUsedCapacity: Resources,
  RunningExecutions: Count,
  EnqueuedExecutions: Count,
});
export type ResourceReport = typeof ResourceReport.Type;
