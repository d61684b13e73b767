import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { tempDir } from "../support/fixtures.ts";
import { chainOf } from "../support/chain-check.ts";
import { timeMarksOf } from "../support/time-marks-check.ts";

/** One writer, each append awaited before the next: a batch of one per commit. */
const SEQUENTIAL_WRITER = `
import { randomUUID } from "node:crypto";
import { SqliteEventStore } from "./src/events/sqlite/sqlite-event-store.ts";
const store = new SqliteEventStore(process.argv.at(-1));
for (let i = 0; ; i++) {
  await store.append("node-k9", [{ id: randomUUID(), type: "Tick", data: { i }, metadata: {} }], i === 0 ? "no_stream" : i - 1);
  process.stdout.write("node-k9 " + i + "\\n"); // acknowledged to the caller only after the append returned
}
`;

/** 40 writers at once, as the actor host's entities are: group commits of many appends. */
const CONCURRENT_WRITER = `
import { randomUUID } from "node:crypto";
import { SqliteEventStore } from "./src/events/sqlite/sqlite-event-store.ts";
const store = new SqliteEventStore(process.argv.at(-1));
const writer = async (w) => {
  for (let i = 0; ; i++) {
    await store.append("node-k9-" + w, [{ id: randomUUID(), type: "Tick", data: { i }, metadata: {} }], i === 0 ? "no_stream" : i - 1);
    process.stdout.write("node-k9-" + w + " " + i + "\\n");
  }
};
await Promise.all(Array.from({ length: 40 }, (_, w) => writer(w)));
`;

/** The same, with the commits on a writer thread (EventStore.SQLite.WriterThread=true). */
const THREADED_WRITER = CONCURRENT_WRITER.replace(
  "new SqliteEventStore(process.argv.at(-1))",
  "new SqliteEventStore(process.argv.at(-1), { writerThread: true })",
);

/**
 * Runs the writer until `acks` appends were acknowledged, kills it with SIGKILL; the last acknowledged index per
 * stream.
 */
async function killAfter(writer: string, file: string, acks: number): Promise<Map<string, number>> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", writer, file], {
    cwd: join(import.meta.dirname, "../.."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const acked = new Map<string, number>();
  let count = 0;
  let buffer = "";
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.stderr.on("data", (d: Buffer) => process.stderr.write(d));
    child.stdout.on("data", (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        const [stream, i] = line.split(" ");
        acked.set(stream as string, Number(i));
        count++;
      }
      if (count >= acks) {
        child.kill("SIGKILL");
        resolve();
      }
    });
    child.once("exit", (code) => (count < acks ? reject(new Error(`writer exited early (${code})`)) : resolve()));
  });
  await new Promise((r) => child.once("exit", r));
  return acked;
}

async function expectAllAcknowledgedStored(file: string, acked: Map<string, number>): Promise<void> {
  // As the kill left the file (opening the store would write marks found missing): committed with their events.
  const marks = timeMarksOf(file);
  expect(marks.stored).toEqual(marks.expected);
  expect(marks.stored.marks.length).toBeGreaterThan(0);
  // So are the links, and the chain goes on from them after the restart.
  const linked = chainOf(file);
  expect(linked.stored).toEqual(linked.expected);
  const store = new SqliteEventStore(file);
  try {
    for (const [stream, last] of acked) {
      const events = await store.readStream(stream);
      expect(events.length, stream).toBeGreaterThanOrEqual(last + 1);
      expect(events.map((e) => (e.data as { i: number }).i)).toEqual(events.map((_, i) => i));
    }
    await store.append("after-kill", [{ id: randomUUID(), type: "NodeApproved", data: {}, metadata: {} }], "no_stream");
    const after = chainOf(file);
    expect(after.stored).toEqual(after.expected);
    expect(after.stored).toHaveLength(linked.stored.length + 1);
  } finally {
    await store.close();
  }
}

describe("SQLite durability", () => {
  it("keeps every acknowledged append across kill -9 of the writer", async () => {
    const file = join(tempDir(), "shoal.db");
    const acked = await killAfter(SEQUENTIAL_WRITER, file, 200);
    await expectAllAcknowledgedStored(file, acked);
  });

  it("keeps every acknowledged append across kill -9 of a writer whose appends share group commits", async () => {
    const file = join(tempDir(), "shoal.db");
    const acked = await killAfter(CONCURRENT_WRITER, file, 4000);
    expect(acked.size).toBe(40);
    await expectAllAcknowledgedStored(file, acked);
  });

  it("keeps every acknowledged append across kill -9 of a writer whose group commits run on a writer thread", async () => {
    expect(THREADED_WRITER).toContain("writerThread: true");
    const file = join(tempDir(), "shoal.db");
    const acked = await killAfter(THREADED_WRITER, file, 4000);
    expect(acked.size).toBe(40);
    await expectAllAcknowledgedStored(file, acked);
  });
});
