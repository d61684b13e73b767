import type { Worker } from "node:worker_threads";
import type { BatchResult, EncodedBatch, WriteFailure } from "./sqlite-batch-writer.ts";
import { startStoreWorker } from "./start-store-worker.ts";

/** Semi-spaces of 2 MB: the worker holds one or two batches at a time. */
const YOUNG_MB = 4;

function startWorker(file: string): Worker {
  return startStoreWorker("sqlite-writer-worker", { file }, { maxYoungGenerationSizeMb: YOUNG_MB });
}

/** Batches out to any writer thread of this process, and who waits for there to be none. */
let batchesOut = 0;
let idle: { promise: Promise<void>; resolve: () => void } | undefined;

function answered(): void {
  batchesOut--;
  if (batchesOut === 0 && idle !== undefined) {
    idle.resolve();
    idle = undefined;
  }
}

/** Whether a writer thread of this process has a batch out. */
export function writerThreadsBusy(): boolean {
  return batchesOut > 0;
}

/**
 * Settles once no writer thread of this process has a batch out (at once when none has). For
 * tests driving a manual clock: a commit now finishes on another thread, not within the
 * event loop's next turns.
 */
export function writerThreadsIdle(): Promise<void> {
  if (batchesOut === 0) return Promise.resolve();
  if (idle === undefined) {
    let resolve = (): void => undefined;
    const promise = new Promise<void>((r) => (resolve = r));
    idle = { promise, resolve };
  }
  return idle.promise;
}

/**
 * The main thread's side of the writer thread: batches go out in order, each answered once it
 * is durable, in the same order. Keeps the process alive only while a batch is out.
 */
export class SqliteWriterThread {
  private readonly worker: Worker;
  private readonly waiting: { resolve: (result: BatchResult) => void }[] = [];
  private stopped: WriteFailure | undefined;
  private readonly exited: Promise<void>;

  constructor(file: string) {
    this.worker = startWorker(file);
    this.worker.unref();
    this.worker.on("message", (message: BatchResult | { ready: true } | { fatal: WriteFailure }) => {
      if ("ready" in message) return;
      if ("fatal" in message) return this.stop(message.fatal);
      const waiter = this.waiting.shift();
      if (waiter !== undefined) answered();
      waiter?.resolve(message);
      if (this.waiting.length === 0) this.worker.unref();
    });
    this.worker.on("error", (e) => this.stop({ t: "unavailable", reason: `its writer thread failed: ${e.message}` }));
    this.exited = new Promise((resolve) =>
      this.worker.once("exit", () => {
        this.stop({ t: "unavailable", reason: "its writer thread stopped" });
        resolve();
      }),
    );
  }

  /** Batches sent and not answered yet. */
  get inFlight(): number {
    return this.waiting.length;
  }

  commit(batch: EncodedBatch): Promise<BatchResult> {
    if (this.stopped !== undefined) return Promise.resolve(failed(this.stopped));
    return new Promise<BatchResult>((resolve) => {
      if (this.waiting.length === 0) this.worker.ref();
      this.waiting.push({ resolve });
      batchesOut++;
      this.worker.postMessage(batch);
    });
  }

  /** After the batches sent so far are answered. */
  async close(): Promise<void> {
    if (this.stopped === undefined) this.worker.postMessage("close");
    this.worker.ref();
    await this.exited;
  }

  /** Nothing more will be committed: batches still out were not (their transaction never finished). */
  private stop(failure: WriteFailure): void {
    this.stopped ??= failure;
    for (const w of this.waiting.splice(0)) {
      answered();
      w.resolve(failed(this.stopped));
    }
  }
}

function failed(failure: WriteFailure): BatchResult {
  return { values: new Float64Array(0), refusals: [], failure };
}
