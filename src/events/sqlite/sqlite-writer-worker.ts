/**
 * The writer thread's entry (a worker_threads worker, started by SqliteWriterThread): it owns
 * the store's write connection and commits each batch it is sent, in the order sent, answering
 * each after its COMMIT (and fsync) returned.
 */
import { parentPort, workerData } from "node:worker_threads";
import type Database from "better-sqlite3";
import { SqliteBatchWriter, describeFailure, type EncodedBatch } from "./sqlite-batch-writer.ts";
import { openWriteConnection } from "./write-connection.ts";

const port = parentPort;
if (port === null) throw new Error("sqlite-writer-worker runs as a worker thread");
const { file } = workerData as { file: string };

let db: Database.Database | undefined;
try {
  db = openWriteConnection(file);
  const writer = new SqliteBatchWriter(db, file);
  const open = db;
  port.on("message", (message: EncodedBatch | "close") => {
    if (message === "close") {
      open.close();
      port.close();
      return;
    }
    const result = writer.commit(message);
    port.postMessage(result, [result.values.buffer as ArrayBuffer]);
  });
  port.postMessage({ ready: true });
} catch (e) {
  db?.close();
  port.postMessage({ fatal: describeFailure(e, file) });
  port.close();
}
