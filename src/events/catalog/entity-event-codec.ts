import { ParseResult, Schema } from "effect";
import type { NewEvent, RecordedEvent } from "../store/event-store.ts";
import { EventMetadata } from "./event-metadata.ts";
import { CorruptEventError, InvalidEventError } from "./event-codec-errors.ts";
import { isJsonValue } from "./schema-fast-path/json-value.ts";
import { NOT_VOUCHED, schemaFastPath, type SchemaFastPath } from "./schema-fast-path/schema-fast-path.ts";

/** How one entity's events are stored and read back: checked on write as a reader will check them. */
export interface EntityEventCodec<Event extends { readonly type: string; readonly data: unknown }> {
  encode(event: Event, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent;
  /** encode through Effect alone: the reference the fast path is tested against. */
  encodeBySchema(event: Event, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent;
  /** The event's data as it is stored, checked by its schema both ways, as a reader will check it. */
  encodeData(event: Event): unknown;
  decode(recorded: RecordedEvent): Event;
  /**
   * decode for a fold (recovery, a read model): the type and schema version are checked at once,
   * as there; the data of the types in `onUse` (those whose evolve reads none of it) is decoded and
   * checked only if something reads it, so a rebuild does not parse it. Whoever reads `data` gets
   * decode's value or its CorruptEventError naming the event. An actor loading its stream uses
   * decode: every event of it is checked whole.
   */
  decodeForFold(recorded: RecordedEvent, onUse: ReadonlySet<Event["type"]>): Event;
  isEventType(type: string): type is Event["type"];
}

const NOT_DECODED: unique symbol = Symbol("not decoded");

/**
 * An event whose data is decoded, exactly as the codec's decode does it, when first read: `data`
 * throws decode's CorruptEventError for data its schema rejects (or, from SQLite, a text that is
 * not JSON), every time it is read. A class, not an object literal with a getter (which V8 builds
 * on its slow path: ≈ 0.4 µs each, more than the parse it spares). `data` is a getter: copy it by
 * name, not by spreading the event; JSON.stringify writes it.
 */
class EventDecodedOnUse {
  readonly #recorded: RecordedEvent;
  /** The codec's own, shared by every event it reads: no closure per event. */
  readonly #dataOf: (type: string, recorded: RecordedEvent) => unknown;
  #decoded: unknown = NOT_DECODED;

  constructor(
    readonly type: string,
    recorded: RecordedEvent,
    dataOf: (type: string, recorded: RecordedEvent) => unknown,
  ) {
    this.#recorded = recorded;
    this.#dataOf = dataOf;
  }

  get data(): unknown {
    if (this.#decoded === NOT_DECODED) this.#decoded = this.#dataOf(this.type, this.#recorded);
    return this.#decoded;
  }

  toJSON(): { type: string; data: unknown } {
    return { type: this.type, data: this.data };
  }
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
    Object.entries(schemas).map(([type, schema]) => [
      type,
      schemaFastPath(schema as Schema.Schema.Any) ?? NO_FAST_PATH,
    ]),
  ) as Record<Type, SchemaFastPath>;
  const isEventType = (type: string): type is Type => Object.prototype.hasOwnProperty.call(schemas, type);
  const schemaOf = (type: Type) => schemas[type] as unknown as Schema.Schema<unknown>;
  const invalid = (type: string, part: string, error: ParseResult.ParseError) =>
    new InvalidEventError(
      `refusing to store an invalid ${type} (${part}): ${ParseResult.TreeFormatter.formatErrorSync(error)}`,
    );

  function encodeData(event: Event): unknown {
    const type = event.type as Type;
    const data = Schema.encodeUnknownEither(schemaOf(type))(event.data);
    if (data._tag === "Left") throw invalid(type, "data", data.left);
    const stored = asStored(data.right);
    const readable = Schema.decodeUnknownEither(schemaOf(type))(stored);
    if (readable._tag === "Left") throw invalid(type, "data", readable.left);
    return stored;
  }

  function encodeBySchema(event: Event, metadata: Omit<EventMetadata, "schemaVersion">, id: string): NewEvent {
    const type = event.type as Type;
    const full: EventMetadata = { ...metadata, schemaVersion: versions[type] };
    const stored = encodeData(event);
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

  /**
   * decode's checks of type and version, without its data. The store's copy of the version spares parsing the metadata.
   */
  function checkTypeAndVersion(recorded: RecordedEvent): Type {
    if (!isEventType(recorded.type))
      throw new CorruptEventError(
        `stream ${recorded.stream}@${recorded.revision}: unknown ${entity} event type ${recorded.type}`,
      );
    const type = recorded.type;
    const version = recorded.schemaVersion ?? recorded.metadata.schemaVersion;
    if (version !== versions[type]) {
      throw new CorruptEventError(
        `stream ${recorded.stream}@${recorded.revision}: ${type} schema version ${String(version)} is not known to this Shoal`,
      );
    }
    return type;
  }

  /** The data of an event whose type and version are checked: as stored when the schema's fast path vouches for it. */
  function dataOf(type: Type, recorded: RecordedEvent): unknown {
    if (fastPaths[type].isStored(recorded.data)) return recorded.data;
    const result = Schema.decodeUnknownEither(schemaOf(type))(recorded.data);
    if (result._tag === "Left")
      throw new CorruptEventError(
        `stream ${recorded.stream}@${recorded.revision}: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`,
      );
    return result.right;
  }

  function decode(recorded: RecordedEvent): Event {
    const type = checkTypeAndVersion(recorded);
    return { type, data: dataOf(type, recorded) } as unknown as Event;
  }

  function decodeForFold(recorded: RecordedEvent, onUse: ReadonlySet<Type>): Event {
    const type = checkTypeAndVersion(recorded);
    if (!onUse.has(type)) return { type, data: dataOf(type, recorded) } as unknown as Event;
    return new EventDecodedOnUse(
      type,
      recorded,
      dataOf as (type: string, recorded: RecordedEvent) => unknown,
    ) as unknown as Event;
  }

  return { encode, encodeBySchema, encodeData, decode, decodeForFold, isEventType };
}

/**
 * One entity kind's events as Shoal registers them (src/events/catalog/entity-events.ts lists every kind's): the
 * category of its streams (`<category>-<id>`), the current schema version of each type, and its codec. The actor host,
 * the processors' envelope, the NATS publisher and the store's newer-schema check all read a kind from here.
 */
export interface EntityEvents<
  Event extends { readonly type: string; readonly data: unknown },
> extends EntityEventCodec<Event> {
  readonly category: string;
  readonly versions: Readonly<Record<Event["type"], number>>;
  /** The types whose data the processors' envelope decodes when first read (decodeForFold's `onUse`). */
  readonly decodedOnRead: ReadonlySet<Event["type"]>;
  /** A stored event as the processors' shared envelope decodes it: decodeForFold with `decodedOnRead`. */
  decodeForProcessors(recorded: RecordedEvent): Event;
}

/** The kind's events: its codec (entityEventCodec, named by the category) with its category and versions. */
export function entityEvents<Event extends { readonly type: string; readonly data: unknown }>(kind: {
  readonly category: string;
  readonly schemas: Readonly<Record<Event["type"], Schema.Schema.Any>>;
  readonly versions: Readonly<Record<Event["type"], number>>;
  readonly decodedOnRead?: ReadonlySet<Event["type"]>;
}): EntityEvents<Event> {
  const { category, versions } = kind;
  const codec = entityEventCodec<Event>(category, kind.schemas, versions);
  const decodedOnRead = kind.decodedOnRead ?? new Set<Event["type"]>();
  const decodeForProcessors =
    decodedOnRead.size === 0
      ? codec.decode
      : (recorded: RecordedEvent): Event => codec.decodeForFold(recorded, decodedOnRead);
  return { ...codec, category, versions, decodedOnRead, decodeForProcessors };
}
