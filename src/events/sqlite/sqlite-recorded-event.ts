import type { RecordedEvent } from "../store/event-store.ts";
import { CorruptEventError } from "../catalog/event-codec-errors.ts";

import type { Row } from "./sqlite-columns.ts";

export { COLUMNS, type Row } from "./sqlite-columns.ts";

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

  constructor(
    position: number,
    id: string,
    stream: string,
    revision: number,
    type: string,
    dataText: string,
    metadataText: string,
    time: string,
    schemaVersion: number | undefined,
  ) {
    this.id = id;
    this.type = type;
    this.stream = stream;
    this.revision = revision;
    this.position = position;
    this.time = time;
    this.#dataText = dataText;
    this.schemaVersion = schemaVersion;
    this.#metadataText = metadataText;
  }

  static fromRow(row: Row): SqliteRecordedEvent {
    return new SqliteRecordedEvent(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8] ?? undefined);
  }

  get data(): unknown {
    if (this.#data === NOT_PARSED) {
      try {
        this.#data = JSON.parse(this.#dataText as string) as unknown;
      } catch (e) {
        throw new CorruptEventError(
          `stream ${this.stream}@${this.revision} (position ${this.position}): its data is not JSON: ${(e as Error).message}`,
        );
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
        throw new CorruptEventError(
          `stream ${this.stream}@${this.revision} (position ${this.position}): its metadata is not JSON: ${(e as Error).message}`,
        );
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
  if ((proto !== Object.prototype && proto !== null) || (metadata as { toJSON?: unknown }).toJSON !== undefined)
    return null;
  const own = Object.getOwnPropertyDescriptor(metadata, "schemaVersion");
  return own?.enumerable === true && Number.isSafeInteger(own.value) ? (own.value as number) + 0 : null;
}
