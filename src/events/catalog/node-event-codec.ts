import { ParseResult, Schema } from "effect";
import type { NewEvent, RecordedEvent } from "../store/event-store.ts";
import { EventMetadata } from "./event-metadata.ts";
import { NODE_EVENT_SCHEMAS, type NodeEvent, type NodeEventType } from "./node-events.ts";
import { isJsonValue } from "./schema-fast-path/json-value.ts";
import { NOT_VOUCHED, schemaFastPath, type SchemaFastPath } from "./schema-fast-path/schema-fast-path.ts";

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
  NodeDrainStarted: 1,
  NodeDrainCompleted: 1,
  NodeDrainDeadlineReached: 1,
  NodeUndrained: 1,
};

export function isNodeEventType(type: string): type is NodeEventType {
  return Object.prototype.hasOwnProperty.call(NODE_EVENT_SCHEMAS, type);
}

export class CorruptEventError extends Error {
  override readonly name = "CorruptEventError";
}

/** An event that its own schema rejects; it must never reach the store. */
export class InvalidEventError extends Error {
  override readonly name = "InvalidEventError";
}

/** What the store's readers will get back: JSON, so no undefined, NaN, Infinity or class instances. */
const asStored = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? "null");

/**
 * Builds the event to append, checked exactly as a reader will check it: the data and metadata
 * after a JSON round trip must decode with this type's schema. A decider bug, or a bad id that
 * slipped past every other check, then fails here and nothing unreadable is ever stored.
 */
export function encodeNodeEvent(event: NodeEvent, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent {
  const full: EventMetadata = { ...metadata, schemaVersion: NODE_EVENT_VERSIONS[event.type] };
  // The common case (a decider's event, the host's metadata) without Effect's parser or a JSON
  // round trip; anything the fast path cannot vouch for takes the full path below.
  const fastData = FAST_PATHS[event.type].encode(event.data);
  if (fastData !== NOT_VOUCHED && fastMetadata(full) !== NOT_VOUCHED) return { id, type: event.type, data: fastData, metadata: full };
  return encodeNodeEventBySchema(event, metadata, id);
}

/** encodeNodeEvent through Effect alone: the reference its fast path is tested against, and its fallback. */
export function encodeNodeEventBySchema(event: NodeEvent, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent {
  const full: EventMetadata = { ...metadata, schemaVersion: NODE_EVENT_VERSIONS[event.type] };
  const schema = NODE_EVENT_SCHEMAS[event.type] as Schema.Schema<unknown>;
  const data = Schema.encodeUnknownEither(schema)(event.data);
  if (data._tag === "Left") throw invalid(event.type, "data", data.left);
  const stored = asStored(data.right);
  const readable = Schema.decodeUnknownEither(schema)(stored);
  if (readable._tag === "Left") throw invalid(event.type, "data", readable.left);
  // Checked, but stored as given: fields the schema does not name yet are kept, not dropped.
  const storedMetadata = asStored(full) as Record<string, unknown>;
  const meta = Schema.decodeUnknownEither(EventMetadata)(storedMetadata);
  if (meta._tag === "Left") throw invalid(event.type, "metadata", meta.left);
  return { id, type: event.type, data: stored, metadata: storedMetadata };
}

/** A schema the fast path does not mirror: Effect decides every value. */
const NO_FAST_PATH: SchemaFastPath = { encode: () => NOT_VOUCHED, isStored: () => false };

/**
 * Per type, the schema's fast path (src/events/catalog/schema-fast-path/): on write it returns the
 * schema's own encode without Effect's parser or a JSON round trip; on read it tells when Effect's
 * decode would return the stored data unchanged (every event Shoal writes: encodeNodeEvent stores
 * the schema's own output), so reading a store does not build a second copy of every event.
 * Anything it does not vouch for goes through Effect as before (test/unit/events/ holds the two to
 * the same answers).
 */
const FAST_PATHS = Object.fromEntries(
  Object.entries(NODE_EVENT_SCHEMAS).map(([type, schema]) => [type, schemaFastPath(schema) ?? NO_FAST_PATH]),
) as Record<NodeEventType, SchemaFastPath>;

const METADATA_FAST_PATH = schemaFastPath(EventMetadata) ?? NO_FAST_PATH;

/** Metadata is stored as given (keys the schema does not name yet are kept): it must be plain JSON and valid as it is. */
const fastMetadata = (metadata: EventMetadata): unknown =>
  isJsonValue(metadata) && METADATA_FAST_PATH.encode(metadata) !== NOT_VOUCHED ? metadata : NOT_VOUCHED;

function invalid(type: string, part: string, error: ParseResult.ParseError): InvalidEventError {
  return new InvalidEventError(`refusing to store an invalid ${type} (${part}): ${ParseResult.TreeFormatter.formatErrorSync(error)}`);
}

/** Validates a stored node event against its schema; a store holding anything else is corrupt. */
export function decodeNodeEvent(recorded: RecordedEvent): NodeEvent {
  // The store's copy of the version spares parsing the metadata (a fold needs nothing else of it).
  return decodeChecked(checkTypeAndVersion(recorded), recorded);
}

/** The event with its data, the type and version already checked: as stored when the schema's fast path vouches for it. */
function decodeChecked(type: NodeEventType, recorded: RecordedEvent): NodeEvent {
  const data = recorded.data;
  return FAST_PATHS[type].isStored(data) ? ({ type, data } as NodeEvent) : decodeNodeEventData(recorded);
}

/** decodeNodeEvent's checks of type and version, without its data. */
function checkTypeAndVersion(recorded: RecordedEvent): NodeEventType {
  if (!isNodeEventType(recorded.type)) {
    throw new CorruptEventError(`stream ${recorded.stream}@${recorded.revision}: unknown node event type ${recorded.type}`);
  }
  const version = recorded.schemaVersion ?? recorded.metadata.schemaVersion;
  if (version !== NODE_EVENT_VERSIONS[recorded.type]) {
    throw new CorruptEventError(
      `stream ${recorded.stream}@${recorded.revision}: ${recorded.type} schema version ${String(version)} is not known to this Shoal`,
    );
  }
  return recorded.type;
}

const NOT_DECODED: unique symbol = Symbol("not decoded");

/**
 * A node event whose data is decoded, exactly as decodeNodeEvent decodes it, when first read:
 * `data` throws decodeNodeEvent's CorruptEventError for data its schema rejects (or, from
 * SQLite, a text that is not JSON), every time it is read. A class, not an object literal with a
 * getter (which V8 builds on its slow path: ≈ 0.4 µs each, more than the parse it spares).
 * `data` is a getter: copy it by name, not by spreading the event; JSON.stringify writes it.
 */
class NodeEventDecodedOnUse {
  readonly #recorded: RecordedEvent;
  #decoded: unknown = NOT_DECODED;

  constructor(
    readonly type: NodeEventType,
    recorded: RecordedEvent,
  ) {
    this.#recorded = recorded;
  }

  get data(): unknown {
    if (this.#decoded === NOT_DECODED) this.#decoded = decodeChecked(this.type, this.#recorded).data;
    return this.#decoded;
  }

  toJSON(): { type: NodeEventType; data: unknown } {
    return { type: this.type, data: this.data };
  }
}

/**
 * decodeNodeEvent for a fold (recovery, the read model): the type and schema version are checked
 * at once, as there; the data of the types in `onUse` (those whose evolve reads none of it:
 * machines/node's EVOLVE_READS_NO_DATA) is decoded and checked only if something reads it, so a
 * rebuild does not parse it. Whoever reads `data` gets decodeNodeEvent's value or its
 * CorruptEventError naming the event. An actor loading its stream uses decodeNodeEvent: every
 * event of it is checked whole.
 */
export function decodeNodeEventForFold(recorded: RecordedEvent, onUse: ReadonlySet<NodeEventType>): NodeEvent {
  const type = checkTypeAndVersion(recorded);
  if (!onUse.has(type)) return decodeChecked(type, recorded);
  return new NodeEventDecodedOnUse(type, recorded) as unknown as NodeEvent;
}

/** The schema's own decode of a stored node event's data (type and version already checked). */
function decodeNodeEventData(recorded: RecordedEvent): NodeEvent {
  const schema = NODE_EVENT_SCHEMAS[recorded.type as NodeEventType] as Schema.Schema<unknown>;
  const result = Schema.decodeUnknownEither(schema)(recorded.data);
  if (result._tag === "Left") {
    throw new CorruptEventError(
      `stream ${recorded.stream}@${recorded.revision}: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`,
    );
  }
  return { type: recorded.type, data: result.right } as NodeEvent;
}
