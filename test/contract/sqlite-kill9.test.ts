import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { tempDir } from "../support/fixtures.ts";

const WRITER = `
import { randomUUID } from "node:crypto";
import { SqliteEventStore } from "./src/events/sqlite/sqlite-event-store.ts";
const store = new SqliteEventStore(process.argv.at(-1));
for (let i = 0; ; i++) {
  await store.append("node-k9", [{ id: randomUUID(), type: "Tick", data: { i }, metadata: {} }], i === 0 ? "no_stream" : i - 1);
  process.stdout.write(i + "\\n"); // acknowledged to the caller only after the append returned
}
`;

describe("SQLite durability", () => {
  it("keeps every acknowledged append across kill -9 of the writer", async () => {
    const file = join(tempDir(), "shoal.db");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", WRITER, file], {
      cwd: join(import.meta.dirname, "../.."),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let acked = -1;
    let buffer = "";
    await new Promise<void>((resolve, reject) => {
      child.once("error", reject);
      child.stderr.on("data", (d: Buffer) => process.stderr.write(d));
      child.stdout.on("data", (d: Buffer) => {
        buffer += d.toString();
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        for (const line of lines) acked = Number(line);
        if (acked >= 200) {
          child.kill("SIGKILL");
          resolve();
        }
      });
      child.once("exit", (code) => (acked < 200 ? reject(new Error(`writer exited early (${code})`)) : resolve()));
    });
    await new Promise((r) => child.once("exit", r));

    const store = new SqliteEventStore(file);
    const events = await store.readStream("node-k9");
    await store.close();
    expect(events.length).toBeGreaterThanOrEqual(acked + 1);
    expect(events.map((e) => (e.data as { i: number }).i)).toEqual(events.map((_, i) => i));
  });
});
