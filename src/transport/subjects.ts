/**
 * NATS subjects of the compute↔orchestrator protocol (docs/protocol.md). Heartbeats are
 * published (fire-and-forget, as Bacalhau ≥ 1.6 sends them); every other call is NATS
 * request/reply. On the orchestrator's own nats-server, per-user permissions make the node id in
 * a subject the identity of whoever published it (docs/security.md).
 */
export const PROTOCOL_METHODS = ["heartbeat", "info", "resources"] as const;
export type ProtocolMethod = (typeof PROTOCOL_METHODS)[number];

export const computeSubject = (nodeId: string, method: ProtocolMethod): string => `shoal.compute.${nodeId}.${method}`;

/** A node joins (registers and binds its key) here, proving it holds the join token. */
export const joinSubject = (nodeId: string): string => `shoal.join.${nodeId}`;
export const JOIN_SUBSCRIPTION = "shoal.join.*";

/**
 * What the orchestrators subscribe to (as one queue group, so each request is handled once): one
 * subject per method, so that a node's execution reports (`shoal.compute.<id>.execution`, the
 * execution report handler's) are not delivered here too.
 */
export const ORCHESTRATOR_SUBSCRIPTIONS: readonly string[] = PROTOCOL_METHODS.map(
  (method) => `shoal.compute.*.${method}`,
);
export const ORCHESTRATOR_QUEUE = "shoal-orchestrators";

/** Work for a node (executions arrive with the job lifecycle); only that node may subscribe. */
export const nodeWorkSubjects = (nodeId: string): string => `shoal.work.${nodeId}.>`;

/**
 * Replies to a node's requests, under its work subjects: one subscription, `shoal.work.<id>.>`,
 * then carries everything addressed to the node (replies, refusals, work), so the hub keeps one
 * entry per node for the leaf servers' interest instead of two (docs/performance.md, Fleet). Only
 * the orchestrator may publish there. `<tag>` is random per connection, so a reply cannot be
 * aimed at a request the node did not send.
 */
export const nodeReplyPrefix = (nodeId: string, tag: string): string => `shoal.work.${nodeId}.reply.${tag}`;
const WORK_PREFIX = "shoal.work.";
/** Whether `reply` lies under node `nodeId`'s work subjects (a reply the node can receive on its one subscription). */
export const isNodeWorkSubject = (nodeId: string, reply: string): boolean =>
  reply.length > WORK_PREFIX.length + nodeId.length + 1 &&
  reply.startsWith(WORK_PREFIX) &&
  reply.startsWith(`${nodeId}.`, WORK_PREFIX.length);

/**
 * A published heartbeat has no reply subject: its refusal goes here, under the node's work
 * subjects, which only that node may subscribe to and only the orchestrator may publish to.
 */
export const heartbeatRefusedSubject = (nodeId: string): string => `shoal.work.${nodeId}.heartbeat-refused`;

const COMPUTE_PREFIX = "shoal.compute.";
const HEARTBEAT_SUFFIX = ".heartbeat";

/** The node id of a heartbeat's subject, or undefined for any other subject. Two string checks and a slice. */
export function heartbeatNodeId(subject: string): string | undefined {
  if (!subject.endsWith(HEARTBEAT_SUFFIX) || !subject.startsWith(COMPUTE_PREFIX)) return undefined;
  const nodeId = subject.slice(COMPUTE_PREFIX.length, subject.length - HEARTBEAT_SUFFIX.length);
  return nodeId.length > 0 && !nodeId.includes(".") ? nodeId : undefined;
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const COMPUTE_PREFIX_BYTES = ascii(COMPUTE_PREFIX);
const HEARTBEAT_SUFFIX_BYTES = ascii(HEARTBEAT_SUFFIX);

/**
 * Whether `subject` is exactly `shoal.compute.<id>.heartbeat` for the id spelled by
 * `id[from, from + length)` (ASCII bytes, as a node id is). The subject may be the bytes NATS
 * delivered (the hot path: nothing decoded, nothing allocated) or a string.
 */
export function isHeartbeatSubjectOf(
  subject: Uint8Array | string,
  id: Uint8Array,
  from: number,
  length: number,
): boolean {
  const prefix = COMPUTE_PREFIX_BYTES.length;
  const suffix = HEARTBEAT_SUFFIX_BYTES.length;
  if (subject.length !== prefix + length + suffix) return false;
  if (typeof subject === "string") {
    for (let i = 0; i < prefix; i++) if (subject.charCodeAt(i) !== COMPUTE_PREFIX_BYTES[i]) return false;
    for (let i = 0; i < length; i++) if (subject.charCodeAt(prefix + i) !== id[from + i]) return false;
    for (let i = 0; i < suffix; i++)
      if (subject.charCodeAt(prefix + length + i) !== HEARTBEAT_SUFFIX_BYTES[i]) return false;
    return true;
  }
  for (let i = 0; i < prefix; i++) if (subject[i] !== COMPUTE_PREFIX_BYTES[i]) return false;
  for (let i = 0; i < length; i++) if (subject[prefix + i] !== id[from + i]) return false;
  for (let i = 0; i < suffix; i++) if (subject[prefix + length + i] !== HEARTBEAT_SUFFIX_BYTES[i]) return false;
  return true;
}

/**
 * Each node receives replies under its own inbox prefix, so no other node can subscribe to them.
 * Its own root keeps node ids from colliding with the join, orchestrator and reader inboxes.
 */
export const NODE_INBOX_ROOT = "_INBOX_NODE";
export const nodeInboxPrefix = (nodeId: string): string => `${NODE_INBOX_ROOT}.${nodeId}`;
/** Joining nodes share one inbox prefix: join replies carry nothing secret. */
export const JOIN_INBOX_PREFIX = "_INBOX_JOIN";

export function parseComputeSubject(subject: string): { nodeId: string; method: ProtocolMethod } | undefined {
  const parts = subject.split(".");
  if (parts.length !== 4 || parts[0] !== "shoal" || parts[1] !== "compute") return undefined;
  const method = parts[3] as ProtocolMethod;
  if (!PROTOCOL_METHODS.includes(method)) return undefined;
  return { nodeId: parts[2] as string, method };
}

export function parseJoinSubject(subject: string): string | undefined {
  const parts = subject.split(".");
  return parts.length === 3 && parts[0] === "shoal" && parts[1] === "join" ? parts[2] : undefined;
}

/** Cluster events for downstream systems: shoal.events.<category>.<entityId>.<EventType>. */
export const eventSubject = (category: string, entityId: string, type: string): string =>
  `shoal.events.${category}.${entityId}.${type}`;
export const EVENTS_STREAM = "SHOAL_EVENTS";
export const EVENTS_SUBJECTS = "shoal.events.>";
/** Signed audit checkpoints (JSON, as docs/audit.md shows), published for copies kept outside Shoal. */
export const AUDIT_CHECKPOINTS_SUBJECT = "shoal.audit.checkpoints";

/** Work for a node (ask for bid, run, cancel): published by the orchestrator, received by that node only. */
export const executionWorkSubject = (nodeId: string): string => `shoal.work.${nodeId}.execution`;
/**
 * A node's execution reports: under its own `shoal.compute.<id>.*`, which its NATS login already
 * allows, so nodes that joined before the work protocol need no new login.
 */
export const EXECUTION_REPORT_METHOD = "execution";
export const executionReportSubject = (nodeId: string): string => `shoal.compute.${nodeId}.${EXECUTION_REPORT_METHOD}`;
export const EXECUTION_REPORT_SUBSCRIPTION = `shoal.compute.*.${EXECUTION_REPORT_METHOD}`;
/** Its own queue group; the node-protocol handler's subjects do not match reports, so each is delivered once. */
export const EXECUTION_REPORT_QUEUE = "shoal-orchestrators-executions";
const EXECUTION_REPORT_SUFFIX = `.${EXECUTION_REPORT_METHOD}`;

/** The node id of an execution report's subject, or undefined for any other subject. */
export function executionReportNodeId(subject: string): string | undefined {
  if (!subject.endsWith(EXECUTION_REPORT_SUFFIX) || !subject.startsWith(COMPUTE_PREFIX)) return undefined;
  const nodeId = subject.slice(COMPUTE_PREFIX.length, subject.length - EXECUTION_REPORT_SUFFIX.length);
  return nodeId.length > 0 && !nodeId.includes(".") ? nodeId : undefined;
}
