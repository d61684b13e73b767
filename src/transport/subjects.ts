/**
 * NATS subjects of the compute↔orchestrator protocol (docs/protocol.md). Every request is
 * NATS request/reply; the node id in the subject must equal the one in the message.
 */
export const PROTOCOL_METHODS = ["register", "heartbeat", "info", "resources"] as const;
export type ProtocolMethod = (typeof PROTOCOL_METHODS)[number];

export const computeSubject = (nodeId: string, method: ProtocolMethod): string => `shoal.compute.${nodeId}.${method}`;

/** What the orchestrators subscribe to (as one queue group, so each request is handled once). */
export const ORCHESTRATOR_SUBSCRIPTION = "shoal.compute.*.*";
export const ORCHESTRATOR_QUEUE = "shoal-orchestrators";

export function parseComputeSubject(subject: string): { nodeId: string; method: ProtocolMethod } | undefined {
  const parts = subject.split(".");
  if (parts.length !== 4 || parts[0] !== "shoal" || parts[1] !== "compute") return undefined;
  const method = parts[3] as ProtocolMethod;
  if (!PROTOCOL_METHODS.includes(method)) return undefined;
  return { nodeId: parts[2] as string, method };
}

/** Cluster events for downstream systems: shoal.events.<category>.<entityId>.<EventType>. */
export const eventSubject = (category: string, entityId: string, type: string): string => `shoal.events.${category}.${entityId}.${type}`;
export const EVENTS_STREAM = "SHOAL_EVENTS";
export const EVENTS_SUBJECTS = "shoal.events.>";
