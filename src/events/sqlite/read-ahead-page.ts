import type { Row } from "./sqlite-columns.ts";

/**
 * A page of stored events as the reader thread (sqlite-reader-worker) hands it to the thread
 * that folds them: numbers in one transferred Float64Array, stream and type names as ordinals
 * (each name crosses once per read, the first time it is seen, so the receiver holds one string
 * per stream and compares and hashes it once), and the event texts as one array of strings.
 * Only strings and typed arrays: a structured clone of it is a copy, never a parse.
 *
 * Kept free of the catalog and of Effect: the reader thread loads this file and nothing heavy.
 */
export interface ReadAheadPage {
  readonly count: number;
  /**
   * Per event: position, revision, schema version (NaN: unknown without parsing the metadata on the receiving side).
   */
  readonly numbers: Float64Array;
  /** Per event: the ordinal of its stream's name among the names sent so far in this read. */
  readonly streams: Int32Array;
  /** Per event: the ordinal of its type among the types sent so far in this read. */
  readonly types: Int32Array;
  /** Stream names first seen in this page, in ordinal order. */
  readonly newStreams: string[];
  readonly newTypes: string[];
  /** Per event: id, data text, metadata text, time. */
  readonly texts: string[];
}

/**
 * Turns rows into pages, remembering which names it has sent. For an event stored without the
 * `schema_version` column (before it existed), the version is read from its metadata here, so
 * that the folding thread need not parse it: only when the metadata is JSON and its
 * `schemaVersion` a safe integer; otherwise NaN, and the receiver parses the metadata (and fails
 * naming the event, if it is not JSON) exactly as before.
 */
export class ReadAheadPageEncoder {
  private readonly streamOrdinals = new Map<string, number>();
  private readonly typeOrdinals = new Map<string, number>();

  encode(rows: readonly Row[]): ReadAheadPage {
    const count = rows.length;
    const numbers = new Float64Array(count * 3);
    const streams = new Int32Array(count);
    const types = new Int32Array(count);
    const newStreams: string[] = [];
    const newTypes: string[] = [];
    const texts = new Array<string>(count * 4);
    for (let i = 0; i < count; i++) {
      const row = rows[i] as Row;
      numbers[3 * i] = row[0];
      numbers[3 * i + 1] = row[3];
      numbers[3 * i + 2] = row[8] ?? versionFromMetadata(row[6]);
      let stream = this.streamOrdinals.get(row[2]);
      if (stream === undefined) {
        this.streamOrdinals.set(row[2], (stream = this.streamOrdinals.size));
        newStreams.push(row[2]);
      }
      streams[i] = stream;
      let type = this.typeOrdinals.get(row[4]);
      if (type === undefined) {
        this.typeOrdinals.set(row[4], (type = this.typeOrdinals.size));
        newTypes.push(row[4]);
      }
      types[i] = type;
      texts[4 * i] = row[1];
      texts[4 * i + 1] = row[5];
      texts[4 * i + 2] = row[6];
      texts[4 * i + 3] = row[7];
    }
    return { count, numbers, streams, types, newStreams, newTypes, texts };
  }
}

function versionFromMetadata(text: string): number {
  try {
    const metadata = JSON.parse(text) as unknown;
    if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) return Number.NaN;
    const own = Object.getOwnPropertyDescriptor(metadata, "schemaVersion");
    return own !== undefined && Number.isSafeInteger(own.value) ? (own.value as number) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The transferable parts of a page (its typed arrays' buffers). */
export function transferList(page: ReadAheadPage): ArrayBuffer[] {
  return [page.numbers.buffer as ArrayBuffer, page.streams.buffer as ArrayBuffer, page.types.buffer as ArrayBuffer];
}
