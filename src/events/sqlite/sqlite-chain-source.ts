import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import type { AuditCheckpoint } from "../chain/audit-checkpoint.ts";
import type { ChainGenesisRecord, ChainRow } from "../chain/verify-chain.ts";
import { readGenesis } from "./chain-schema.ts";
import { STORE_FILE_VERSION } from "./newer-schema.ts";

const ROWS = "position, event_id, stream, revision, type, time, data, metadata, link";
type RawRow = [number, string, string, number, string, string, string, string, Buffer | null];

export class ChainSourceError extends Error {
  override readonly name = "ChainSourceError";
}

function toChainRow(r: RawRow): ChainRow {
  return {
    position: r[0],
    id: r[1],
    stream: r[2],
    revision: r[3],
    type: r[4],
    time: r[5],
    data: r[6],
    metadata: r[7],
    link: r[8],
  };
}

/** The chain's records in a store file, read on any connection to it (the store's own, or a read-only one). */
export class SqliteChainReader {
  private readonly statements;

  constructor(private readonly db: Database.Database) {
    this.statements = {
      rows: db.prepare(`SELECT ${ROWS} FROM events WHERE position > ? ORDER BY position LIMIT ?`).raw(),
      linkAt: db.prepare("SELECT link FROM events WHERE position = ?").pluck(),
      head: db.prepare("SELECT max(position) FROM events").pluck(),
      checkpoints: db.prepare(
        "SELECT position, link, time, key_id, public_key, signature FROM audit_checkpoints WHERE position > ? " +
          "ORDER BY position LIMIT ?",
      ),
    };
  }

  genesis(): ChainGenesisRecord {
    const g = readGenesis(this.db);
    if (g === undefined) throw new ChainSourceError("the store has no chain genesis");
    return g;
  }

  head(): number {
    return (this.statements.head.get() as number | null) ?? 0;
  }

  /** The link stored at a position: undefined when no row is there, null when the row has none. */
  linkAt(position: number): Buffer | null | undefined {
    return this.statements.linkAt.get(position) as Buffer | null | undefined;
  }

  /** Up to `limit` rows after `after`, in position order, with their stored texts and links. */
  page(after: number, limit: number): ChainRow[] {
    return (this.statements.rows.all(after, limit) as RawRow[]).map(toChainRow);
  }

  /** Every row after `after` (through `to`), a page at a time, yielding to the event loop between pages. */
  async *rows(after: number, to = Infinity, pageSize = 2000): AsyncGenerator<ChainRow> {
    for (let cursor = after; cursor < to;) {
      const page = this.page(cursor, pageSize);
      for (const row of page) {
        if (row.position > to) return;
        yield row;
      }
      if (page.length < pageSize) return;
      cursor = page[page.length - 1]!.position;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  checkpoints(after = 0, limit = -1): AuditCheckpoint[] {
    const rows = this.statements.checkpoints.all(after, limit) as {
      position: number;
      link: Buffer;
      time: string;
      key_id: string;
      public_key: string;
      signature: string;
    }[];
    return rows.map((r) => ({
      position: r.position,
      link: r.link.toString("hex"),
      time: r.time,
      keyId: r.key_id,
      publicKey: r.public_key,
      signature: r.signature,
    }));
  }
}

/**
 * A store file opened read-only, for a verification that needs no orchestrator (and trusts
 * none): nothing is written to the file, and a store from before the chain is refused.
 */
export function openChainFile(file: string): { reader: SqliteChainReader; close: () => void } {
  if (!existsSync(file)) throw new ChainSourceError(`${file}: no such store file`);
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new ChainSourceError(`cannot open ${file}: ${(e as Error).message}`);
  }
  try {
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version < 3)
      throw new ChainSourceError(
        `${file} is a store file of version ${version}, from before the hash chain (version 3); ` +
          "start this Shoal on it once to begin the chain",
      );
    if (version > STORE_FILE_VERSION)
      throw new ChainSourceError(
        `${file} is a store file of version ${version}; this Shoal reads store files up to version ${STORE_FILE_VERSION}`,
      );
    return { reader: new SqliteChainReader(db), close: () => db.close() };
  } catch (e) {
    db.close();
    throw e;
  }
}
