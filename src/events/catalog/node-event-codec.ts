import { ParseResult, Schema } from "effect";
import type { NewEvent, RecordedEvent } from "../store/event-store.ts";
import type { EventMetadata } from "./event-metadata.ts";
import { NODE_EVENT_SCHEMAS, type NodeEvent, type NodeEventType } from "./node-events.ts";

/**
 * Current schema version of each node event type. A change to an event's data shape bumps its
 * version here and adds an upcaster in decodeNodeEvent; stored events are never rewritten.
 */
export const NODE_EVENT_VERSIONS: Record<NodeEventType, number> = {
  NodeRegistered: 1,
  NodeApproved: 1,
  NodeRejected: 1,
  NodeDeleted: 1,
  NodeInfoUpdated: 1,
  NodeBecameUnhealthy: 1,
  NodeBecameUnknown: 1,
  NodeBecameHealthy: 1,
  NodeCredentialBound: 1,
  NodeCredentialRevoked: 1,
};

export function isNodeEventType(type: string): type is NodeEventType {
  return Object.prototype.hasOwnProperty.call(NODE_EVENT_SCHEMAS, type);
}

export class CorruptEventError extends Error {
  override readonly name = "CorruptEventError";
}

export function encodeNodeEvent(event: NodeEvent, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent {
  const full: EventMetadata = { ...metadata, schemaVersion: NODE_EVENT_VERSIONS[event.type] };
  return { id, type: event.type, data: event.data, metadata: full };
}

/** Validates a stored node event against its schema; a store holding anything else is corrupt. */
export function decodeNodeEvent(recorded: RecordedEvent): NodeEvent {
  if (!isNodeEventType(recorded.type)) {
    throw new CorruptEventError(`stream ${recorded.stream}@${recorded.revision}: unknown node event type ${recorded.type}`);
  }
  const version = recorded.metadata.schemaVersion;
  if (version !== NODE_EVENT_VERSIONS[recorded.type]) {
    throw new CorruptEventError(
      `stream ${recorded.stream}@${recorded.revision}: ${recorded.type} schema version ${String(version)} is not known to this Shoal`,
    );
  }
  const schema = NODE_EVENT_SCHEMAS[recorded.type] as Schema.Schema<unknown>;
  const result = Schema.decodeUnknownEither(schema)(recorded.data);
  if (result._tag === "Left") {
    throw new CorruptEventError(
      `stream ${recorded.stream}@${recorded.revision}: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`,
    );
  }
  return { type: recorded.type, data: result.right } as NodeEvent;
}
