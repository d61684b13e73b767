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

/**
 * The columns of a Row, in its order. Kept apart from the recorded event (and the catalog it needs) for the reader
 * thread.
 */
export const COLUMNS = "position, event_id, stream, revision, type, data, metadata, time, schema_version";
