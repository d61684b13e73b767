import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
import type { RecordedEvent } from "../store/event-store.ts";
import { StoreUnavailableError } from "../store/store-errors.ts";
import { CONTROL_WORDS, STOP, TAKEN, WAITING } from "./read-ahead-control.ts";
import type { ReadAheadPage } from "./read-ahead-page.ts";
import type { WriteFailure } from "./sqlite-batch-writer.ts";
import { SqliteRecordedEvent } from "./sqlite-recorded-event.ts";
import { startStoreWorker } from "./start-store-worker.ts";
import { toError } from "./write-failure-error.ts";

/** The reader thread holds a page or two at a time. */
const YOUNG_MB = 8;

type Received = { message: ReadAheadPage | { fatal: WriteFailure } };

export interface ReadAheadOptions {
  readonly after: number;
  readonly pageSize: number;
  /** Pages the reader thread may read ahead of the ones taken. */
  readonly depth: number;
}

/**
 * EventStore.readAllPages for a long replay of a SQLite store: a reader thread
 * (sqlite-reader-worker) steps SQLite's rows on its own read-only connection while this thread
 * folds the pages it already has. Pages wait on a channel of their own and are taken with
 * receiveMessageOnPort when the consumer asks for the next one, so a page is copied into this
 * thread's heap only then (pages read ahead do not sit in its young generation through
 * scavenges). Flow control is shared memory (read-ahead-control.ts), not a message per page;
 * the worker's plain messages only wake this thread when it sleeps waiting for a page.
 *
 * The guarantees of the port: pages in global order, each position once (checked here: every
 * position must follow the one before it), and a failure of the reader — SQLite's error, the
 * thread failing or stopping — rejects the iteration after the last page read, naming the store.
 * Leaving the loop (or a consumer's error) terminates the thread.
 */
export async function* readAheadPages(
  file: string,
  options: ReadAheadOptions,
): AsyncGenerator<readonly RecordedEvent[]> {
  const { port1: pages, port2 } = new MessageChannel();
  const control = new Int32Array(new SharedArrayBuffer(CONTROL_WORDS * Int32Array.BYTES_PER_ELEMENT));
  const worker = startStoreWorker(
    "sqlite-reader-worker",
    {
      file,
      after: options.after,
      pageSize: options.pageSize,
      depth: options.depth,
      pages: port2,
      control: control.buffer,
    },
    { maxYoungGenerationSizeMb: YOUNG_MB },
    [port2],
  );
  let stopped: Error | undefined;
  let wake: (() => void) | undefined;
  const wakeUp = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  worker.on("message", wakeUp);
  worker.on("error", (e) => {
    stopped ??= new StoreUnavailableError({
      reason: `cannot read SQLite store ${file}: its reader thread failed: ${e.message}`,
    });
    wakeUp();
  });
  worker.on("exit", (code) => {
    stopped ??= new StoreUnavailableError({
      reason: `cannot read SQLite store ${file}: its reader thread stopped (exit code ${code}) before the end of the store`,
    });
    wakeUp();
  });
  const streams: string[] = [];
  const types: string[] = [];
  let last = options.after;
  try {
    for (;;) {
      let received = receiveMessageOnPort(pages) as Received | undefined;
      if (received === undefined) {
        // Say so before looking again: a page posted after this look comes with a word on the parent port.
        Atomics.store(control, WAITING, 1);
        received = receiveMessageOnPort(pages) as Received | undefined;
      }
      if (received === undefined) {
        // Pages posted before the thread failed are taken first (above); then its failure.
        if (stopped !== undefined) throw stopped;
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      const page = received.message;
      if ("fatal" in page) {
        const f = page.fatal;
        throw f.t === "unavailable"
          ? new StoreUnavailableError({ reason: `cannot read SQLite store ${file}: ${f.reason}` })
          : toError(f);
      }
      for (const s of page.newStreams) streams.push(s);
      for (const t of page.newTypes) types.push(t);
      const { count, numbers, texts } = page;
      const events = new Array<RecordedEvent>(count);
      for (let i = 0; i < count; i++) {
        const position = numbers[3 * i] as number;
        if (!(position > last))
          throw new Error(`SQLite store ${file}: the reader thread sent position ${position} after ${last}`);
        last = position;
        const version = numbers[3 * i + 2] as number;
        events[i] = new SqliteRecordedEvent(
          position,
          texts[4 * i] as string,
          streams[page.streams[i] as number] as string,
          numbers[3 * i + 1] as number,
          types[page.types[i] as number] as string,
          texts[4 * i + 1] as string,
          texts[4 * i + 2] as string,
          texts[4 * i + 3] as string,
          Number.isNaN(version) ? undefined : version,
        );
      }
      const more = count === options.pageSize;
      // The thread reads the next page while this one is folded.
      Atomics.add(control, TAKEN, 1);
      Atomics.notify(control, TAKEN);
      if (count > 0) yield events;
      if (!more) return;
    }
  } finally {
    Atomics.store(control, STOP, 1);
    Atomics.notify(control, TAKEN);
    pages.close();
    await worker.terminate();
  }
}
