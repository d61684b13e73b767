/**
 * The reader thread's entry (a worker_threads worker, started by readAheadPages): on its own
 * read-only connection (WAL lets it read beside the writer), it reads the store's events in
 * global order, page after page, from `after`, and posts each page on its pages channel as it
 * is read, at most `depth` pages ahead of the pages taken (read-ahead-control.ts). It stops
 * after the first page shorter than `pageSize` (the end of the store as that read found it),
 * or at STOP, and then waits to be terminated. A failure is posted on the same channel, after
 * the pages read before it.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import Database from "better-sqlite3";
import { ReadAheadPageEncoder, transferList } from "./read-ahead-page.ts";
import { STOP, TAKEN, WAITING } from "./read-ahead-control.ts";
import { describeFailure } from "./sqlite-batch-writer.ts";
import { COLUMNS, type Row } from "./sqlite-columns.ts";

const port = parentPort;
if (port === null) throw new Error("sqlite-reader-worker runs as a worker thread");
const {
  file,
  after,
  pageSize,
  depth,
  pages,
  control: shared,
} = workerData as {
  file: string;
  after: number;
  pageSize: number;
  depth: number;
  pages: MessagePort;
  control: SharedArrayBuffer;
};
const control = new Int32Array(shared);
// Kept alive until terminated: the taker may still be receiving the last pages.
port.on("message", () => undefined);

/** A page (or the failure) on the pages channel; a word on the parent port if the taker sleeps. */
function post(message: unknown, transfer: ArrayBuffer[] = []): void {
  pages.postMessage(message, transfer);
  if (Atomics.exchange(control, WAITING, 0) === 1) (port as MessagePort).postMessage(0);
}

let db: Database.Database | undefined;
try {
  db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  const read = db.prepare(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`).raw();
  const encoder = new ReadAheadPageEncoder();
  let position = after;
  for (let sent = 0; Atomics.load(control, STOP) === 0; sent++) {
    for (let taken = Atomics.load(control, TAKEN); sent - taken >= depth; taken = Atomics.load(control, TAKEN)) {
      if (Atomics.load(control, STOP) !== 0) break;
      Atomics.wait(control, TAKEN, taken, 1000);
    }
    if (Atomics.load(control, STOP) !== 0) break;
    const page = encoder.encode(read.all(position, pageSize) as Row[]);
    if (page.count > 0) position = page.numbers[3 * (page.count - 1)] as number;
    post(page, transferList(page));
    if (page.count < pageSize) break;
  }
} catch (e) {
  post({ fatal: describeFailure(e, file) });
} finally {
  db?.close();
}
