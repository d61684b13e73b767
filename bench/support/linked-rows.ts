import type Database from "better-sqlite3";
import { actorColumns } from "../../src/events/sqlite/actor-columns.ts";
import { OP_APPEND, SqliteBatchWriter, type EncodedBatch } from "../../src/events/sqlite/sqlite-batch-writer.ts";

/** Events per commit while building. */
const BATCH_EVENTS = 4096;

/**
 * Fills a bench's store through the store's own writer, so every row carries its link, its
 * actor columns and its time marks as an append would leave them (rows INSERTed around the
 * writer would carry no link: the store then reads as altered). One event per append, with its
 * revision's expected revision; a commit every BATCH_EVENTS events.
 */
export class LinkedRows {
  private readonly writer: SqliteBatchWriter;
  private batch: EncodedBatch = [];
  private events = 0;

  constructor(db: Database.Database, file: string) {
    this.writer = new SqliteBatchWriter(db, file);
  }

  add(
    id: string,
    stream: string,
    revision: number,
    type: string,
    data: string,
    metadata: string,
    time: string,
    schemaVersion: number | null,
  ): void {
    const [actorType, actorId] = actorColumns(JSON.parse(metadata) as Record<string, unknown>, metadata);
    this.batch.push(OP_APPEND, stream, revision === 0 ? "no_stream" : revision - 1, 1);
    this.batch.push(id, type, data, metadata, time, schemaVersion, actorType, actorId);
    if (++this.events >= BATCH_EVENTS) this.flush();
  }

  /** Commits what is pending; throws on any refusal, since a bench's log must hold every row it made. */
  flush(): void {
    if (this.events === 0) return;
    const result = this.writer.commit(this.batch);
    if (result.failure !== undefined) throw new Error(`building the store failed: ${JSON.stringify(result.failure)}`);
    if (result.refusals.length > 0)
      throw new Error(`building the store refused writes: ${JSON.stringify(result.refusals.slice(0, 4))}`);
    this.batch = [];
    this.events = 0;
  }
}
