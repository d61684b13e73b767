import type Database from "better-sqlite3";
import { eventLink, ZERO_LINK } from "../chain/event-link.ts";
import type { UpgradeLog } from "./audit-schema.ts";

/**
 * Store file version 3: each event's link (docs/audit.md, The hash chain), the genesis the chain
 * starts from, and the signed checkpoints. A store made before the chain keeps its rows as they
 * are: one genesis record covers them (a hash over their stored bytes, chained as links are), and
 * the rows after it carry their own link.
 */
const TABLES = `
CREATE TABLE IF NOT EXISTS chain_genesis (
  after_position INTEGER PRIMARY KEY,
  link           BLOB NOT NULL,
  events         INTEGER NOT NULL,
  created_at     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_checkpoints (
  position   INTEGER PRIMARY KEY,
  link       BLOB NOT NULL,
  time       TEXT NOT NULL,
  key_id     TEXT NOT NULL,
  public_key TEXT NOT NULL,
  signature  TEXT NOT NULL
);
`;

/** The columns a link covers, in the order `linkedRow` reads them. */
export const LINKED_COLUMNS = "position, event_id, stream, revision, type, time, data, metadata";
export type LinkedRow = [
  position: number,
  eventId: string,
  stream: string,
  revision: number,
  type: string,
  time: string,
  data: string,
  metadata: string,
];

export function linkOfRow(previous: Uint8Array, previousPosition: number, row: LinkedRow): Buffer {
  return eventLink(previous, previousPosition, {
    position: row[0],
    id: row[1],
    stream: row[2],
    revision: row[3],
    type: row[4],
    time: row[5],
    data: row[6],
    metadata: row[7],
  });
}

export interface ChainGenesis {
  /** The chain's first linked event follows this position (0: the store's first event is linked). */
  readonly afterPosition: number;
  /** The rows up to afterPosition, chained from ZERO_LINK as links are (ZERO_LINK when there are none). */
  readonly link: Buffer;
  readonly events: number;
  readonly createdAt: string;
}

/** The chain of the rows up to the store's head, from nothing: what a genesis records. */
export function chainRows(db: Database.Database, through: number): { link: Buffer; events: number } {
  let link = ZERO_LINK;
  let previous = 0;
  let events = 0;
  const rows = db.prepare(`SELECT ${LINKED_COLUMNS} FROM events WHERE position <= ? ORDER BY position`).raw();
  for (const row of rows.iterate(through) as Iterable<LinkedRow>) {
    link = linkOfRow(link, previous, row);
    previous = row[0];
    events++;
  }
  return { link, events };
}

/**
 * Adds the link column and the chain's tables, and records the genesis once (inside the caller's
 * transaction, which raises the file's version): the hash over every row stored before the chain
 * began, read once here and never rewritten.
 */
export function addChainSchema(db: Database.Database, now: string, log: UpgradeLog | undefined): void {
  const columns = db.prepare("SELECT name FROM pragma_table_xinfo('events')").pluck().all() as string[];
  if (!columns.includes("link")) db.exec("ALTER TABLE events ADD COLUMN link BLOB");
  db.exec(TABLES);
  if (readGenesis(db) !== undefined) return;
  const started = performance.now();
  const head = (db.prepare("SELECT max(position) FROM events").pluck().get() as number | null) ?? 0;
  const { link, events } = chainRows(db, head);
  db.prepare("INSERT INTO chain_genesis (after_position, link, events, created_at) VALUES (?, ?, ?, ?)").run(
    head,
    link,
    events,
    now,
  );
  if (events > 0) {
    log?.info(
      { events, afterPosition: head, ms: Math.round(performance.now() - started) },
      "store upgraded to file version 3: the events stored before the hash chain are covered by its genesis",
    );
  }
}

export function readGenesis(db: Database.Database): ChainGenesis | undefined {
  const row = db.prepare("SELECT after_position, link, events, created_at FROM chain_genesis LIMIT 1").get() as
    { after_position: number; link: Buffer; events: number; created_at: string } | undefined;
  return row === undefined
    ? undefined
    : { afterPosition: row.after_position, link: row.link, events: row.events, createdAt: row.created_at };
}

/** Where the writer's chain stands: the position the next event follows, and the link it chains from. */
export interface ChainHead {
  position: number;
  link: Buffer;
}

/**
 * The chain's head at open: the newest row's link, or the genesis. Rows with no link after the
 * newest linked one (written around Shoal's writer) are chained here, unsaved, so the writer goes
 * on from them; verification reports the first of them. Positions are never reused: after a
 * deleted tail, the next event takes the position after the highest ever given, and verification
 * reports the gap.
 */
export function loadChainHead(db: Database.Database): ChainHead {
  const genesis = readGenesis(db);
  if (genesis === undefined) throw new Error("the store has no chain genesis");
  const linked = db
    .prepare("SELECT position, link FROM events WHERE position > ? AND link IS NOT NULL ORDER BY position DESC LIMIT 1")
    .get(genesis.afterPosition) as { position: number; link: Buffer } | undefined;
  let position = linked?.position ?? genesis.afterPosition;
  let link = linked?.link ?? genesis.link;
  const unlinked = db.prepare(`SELECT ${LINKED_COLUMNS} FROM events WHERE position > ? ORDER BY position`).raw();
  for (const row of unlinked.iterate(position) as Iterable<LinkedRow>) {
    link = linkOfRow(link, position, row);
    position = row[0];
  }
  return { position, link };
}

/** The highest position ever given (AUTOINCREMENT's own record): the next event's position is one more. */
export function highestPosition(db: Database.Database): number {
  const seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck().get() as number | undefined;
  return seq ?? 0;
}
