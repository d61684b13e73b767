import { ParseResult, Schema } from "effect";
import type { NewEvent, RecordedEvent } from "../store/event-store.ts";
import { EventMetadata } from "./event-metadata.ts";
import { CorruptEventError, InvalidEventError } from "./node-event-codec.ts";
import { isJsonValue } from "./schema-fast-path/json-value.ts";
import { NOT_VOUCHED, schemaFastPath, type SchemaFastPath } from "./schema-fast-path/schema-fast-path.ts";

/** How one entity's events are stored and read back: checked on write as a reader will check them. */
export interface EntityEventCodec<Event extends { readonly type: string; readonly data: unknown }> {
  encode(event: Event, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent;
  /** encode through Effect alone: the reference the fast path is tested against. */
  encodeBySchema(event: Event, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent;
  decode(recorded: RecordedEvent): Event;
  isEventType(type: string): type is Event["type"];
}

const NO_FAST_PATH: SchemaFastPath = { encode: () => NOT_VOUCHED, isStored: () => false };
const METADATA_FAST_PATH = schemaFastPath(EventMetadata) ?? NO_FAST_PATH;
const asStored = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? "null");

/**
 * The node codec's rules (node-event-codec.ts) for any entity's catalog: each type's schema and
 * current version; nothing is stored that its own schema would not read back; the schema fast
 * path spares Effect's parser whenever it can vouch for a value, and Effect decides (and
 * explains) everything else; a stored event of an unknown type or version is corrupt, never
 * misread. A changed data shape bumps the type's version and adds an upcaster in `decode`.
 */
export function entityEventCodec<Event extends { readonly type: string; readonly data: unknown }>(
  entity: string,
  schemas: Readonly<Record<Event["type"], Schema.Schema.Any>>,
  versions: Readonly<Record<Event["type"], number>>,
): EntityEventCodec<Event> {
  type Type = Event["type"];
  const fastPaths = Object.fromEntries(
    Object.entries(schemas).map(([type, schema]) => [type, schemaFastPath(schema as Schema.Schema.Any) ?? NO_FAST_PATH]),
  ) as Record<Type, SchemaFastPath>;
  const isEventType = (type: string): type is Type => Object.prototype.hasOwnProperty.call(schemas, type);
  const schemaOf = (type: Type) => schemas[type] as unknown as Schema.Schema<unknown>;
  const invalid = (type: string, part: string, error: ParseResult.ParseError) =>
    new InvalidEventError(`refusing to store an invalid ${type} (${part}): ${ParseResult.TreeFormatter.formatErrorSync(error)}`);

  function encodeBySchema(event: Event, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent {
    const type = event.type as Type;
    const full: EventMetadata = { ...metadata, schemaVersion: versions[type] };
    const data = Schema.encodeUnknownEither(schemaOf(type))(event.data);
    if (data._tag === "Left") throw invalid(type, "data", data.left);
    const stored = asStored(data.right);
    const readable = Schema.decodeUnknownEither(schemaOf(type))(stored);
    if (readable._tag === "Left") throw invalid(type, "data", readable.left);
    const storedMetadata = asStored(full) as Record<string, unknown>;
    const meta = Schema.decodeUnknownEither(EventMetadata)(storedMetadata);
    if (meta._tag === "Left") throw invalid(type, "metadata", meta.left);
    return { id, type, data: stored, metadata: storedMetadata };
  }

  function encode(event: Event, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent {
    const type = event.type as Type;
    const full: EventMetadata = { ...metadata, schemaVersion: versions[type] };
    const fastData = fastPaths[type].encode(event.data);
    const metadataVouched = isJsonValue(full) && METADATA_FAST_PATH.encode(full) !== NOT_VOUCHED;
    if (fastData !== NOT_VOUCHED && metadataVouched) return { id, type, data: fastData, metadata: full };
    return encodeBySchema(event, metadata, id);
  }

  function decode(recorded: RecordedEvent): Event {
    if (!isEventType(recorded.type)) throw new CorruptEventError(`stream ${recorded.stream}@${recorded.revision}: unknown ${entity} event type ${recorded.type}`);
    const type = recorded.type;
    const version = recorded.schemaVersion ?? recorded.metadata.schemaVersion;
    if (version !== versions[type]) {
      throw new CorruptEventError(`stream ${recorded.stream}@${recorded.revision}: ${type} schema version ${String(version)} is not known to this Shoal`);
    }
    if (fastPaths[type].isStored(recorded.data)) return { type, data: recorded.data } as unknown as Event;
    const result = Schema.decodeUnknownEither(schemaOf(type))(recorded.data);
    if (result._tag === "Left") throw new CorruptEventError(`stream ${recorded.stream}@${recorded.revision}: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`);
    return { type, data: result.right } as unknown as Event;
  }

  return { encode, encodeBySchema, decode, isEventType };
}
