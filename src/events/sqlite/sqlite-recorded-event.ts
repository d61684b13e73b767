import type { RecordedEvent } from "../store/event-store.ts";
import { CorruptEventError } from "../catalog/node-event-codec.ts";

/** A stored event as the reads select it, positionally (`.raw()`): no per-row object with named keys. */
export type Row = [
  position: number,
  eventId: string,
  stream: string,
  revision: number,
  type: string,
  data: string,
  metadata: string,
  time: string,
  schemaVersion: number | null,
];

export const COLUMNS = "position, event_id, stream, revision, type, data, metadata, time, schema_version";

const NOT_PARSED: unique symbol = Symbol("not parsed");

/**
 * A stored event read from SQLite. Its data and its metadata are parsed on first use: a fold
 * needs only `schemaVersion` of the metadata, which the `schema_version` column holds beside it
 * (parsing the metadata was ≈ 40 % of reading a page), and no part of the data of an event whose
 * evolve reads none (a node's NodeBecameHealthy, say: `decodeNodeEventForFold`). A text that is
 * not JSON fails where it is first read, with a CorruptEventError naming the event.
 *
 * `data` and `metadata` are getters: copy them by name, not by spreading the event.
 */
export class SqliteRecordedEvent implements RecordedEvent {
  readonly id: string;
  readonly type: string;
  readonly stream: string;
  readonly revision: number;
  readonly position: number;
  readonly time: string;
  readonly schemaVersion: number | undefined;
  #dataText: string | undefined;
  #data: unknown = NOT_PARSED;
  #metadataText: string | undefined;
  #metadata: Readonly<Record<string, unknown>> | undefined;

  constructor(row: Row) {
    this.id = row[1];
    this.type = row[4];
    this.stream = row[2];
    this.revision = row[3];
    this.position = row[0];
    this.time = row[7];
    this.#dataText = row[5];
    this.schemaVersion = row[8] ?? undefined;
    this.#metadataText = row[6];
  }

  get data(): unknown {
    if (this.#data === NOT_PARSED) {
      try {
        this.#data = JSON.parse(this.#dataText as string) as unknown;
      } catch (e) {
        throw new CorruptEventError(`stream ${this.stream}@${this.revision} (position ${this.position}): its data is not JSON: ${(e as Error).message}`);
      }
      this.#dataText = undefined;
    }
    return this.#data;
  }

  get metadata(): Readonly<Record<string, unknown>> {
    if (this.#metadata === undefined) {
      try {
        this.#metadata = JSON.parse(this.#metadataText as string) as Record<string, unknown>;
      } catch (e) {
        throw new CorruptEventError(`stream ${this.stream}@${this.revision} (position ${this.position}): its metadata is not JSON: ${(e as Error).message}`);
      }
      this.#metadataText = undefined;
    }
    return this.#metadata;
  }
}

/**
 * What the `schema_version` column holds for an event appended with `metadata`: its
 * `schemaVersion`, when the stored text (JSON.stringify of it) certainly says that same integer;
 * null otherwise (readers then parse the metadata for it, as they do for events stored before
 * the column existed).
 */
export function schemaVersionColumn(metadata: Readonly<Record<string, unknown>>): number | null {
  const proto: unknown = Object.getPrototypeOf(metadata);
  if ((proto !== Object.prototype && proto !== null) || (metadata as { toJSON?: unknown }).toJSON !== undefined) return null;
  const own = Object.getOwnPropertyDescriptor(metadata, "schemaVersion");
  return own?.enumerable === true && Number.isSafeInteger(own.value) ? (own.value as number) + 0 : null;
}
