import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { auditSigningKey, type AuditCheckpoint } from "../../src/events/chain/audit-checkpoint.ts";
import { eventLink, type LinkedFields } from "../../src/events/chain/event-link.ts";
import { chainStart, verifyChain, type ChainVerdict } from "../../src/events/chain/verify-chain.ts";
import { openChainFile } from "../../src/events/sqlite/sqlite-chain-source.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { tempDir } from "../support/fixtures.ts";

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const ev = (n: number, type = "NodeLabelsUpdated"): NewEvent => ({
  id: randomUUID(),
  type,
  data: { n, labels: { rack: `r-${n}` } },
  metadata: {
    time: new Date(Date.UTC(2026, 10, 29, 9, 0, n)).toISOString(),
    actor: { type: "operator", id: n % 2 === 0 ? "alice" : "bob" },
    reason: `change ${n}`,
  },
});

/** 50 events over 5 streams, appended as an orchestrator would, in a file then closed. */
async function storeOf50(): Promise<string> {
  const file = join(tempDir(), "shoal.db");
  const store = new SqliteEventStore(file);
  for (let i = 0; i < 10; i++)
    for (let s = 0; s < 5; s++) await store.append(`node-n-${s}`, [ev(i * 5 + s)], i === 0 ? "no_stream" : i - 1);
  await store.close();
  return file;
}

async function verifyFile(
  file: string,
  options: { from?: number; to?: number; checkpoints?: AuditCheckpoint[] } = {},
): Promise<ChainVerdict> {
  const { reader, close } = openChainFile(file);
  closers.push(close);
  const genesis = reader.genesis();
  const { start } = chainStart(
    options.from,
    genesis,
    options.from === undefined ? undefined : reader.linkAt(options.from - 1),
  );
  return verifyChain({
    genesis,
    ...(start === undefined ? {} : { start }),
    rows: reader.rows(start?.afterPosition ?? 0, options.to),
    ...(options.to === undefined ? {} : { to: options.to }),
    checkpoints: options.checkpoints ?? reader.checkpoints(),
  });
}

function tamper(file: string, sql: string, ...params: unknown[]): void {
  const db = new Database(file);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

/** Swaps two rows' contents (every column but the position, their links too unless `keepLinks`). */
function swap(file: string, a: number, b: number, keepLinks = false): void {
  const db = new Database(file);
  const cols = ["event_id", "stream", "revision", "type", "data", "metadata", "time", ...(keepLinks ? [] : ["link"])];
  const get = db.prepare(`SELECT ${cols.join(", ")} FROM events WHERE position = ?`).raw();
  const set = db.prepare(`UPDATE events SET ${cols.map((c) => `${c} = ?`).join(", ")} WHERE position = ?`);
  db.transaction(() => {
    const ra = get.get(a) as unknown[];
    const rb = get.get(b) as unknown[];
    db.prepare("UPDATE events SET event_id = 'moving', stream = 'moving', revision = -1 WHERE position = ?").run(a);
    set.run(...ra, b);
    set.run(...rb, a);
  })();
  db.close();
}

describe("shoal's hash chain, verified from a store file", () => {
  it("holds over an untouched store, whole and in a range", async () => {
    const file = await storeOf50();
    const whole = await verifyFile(file);
    expect(whole).toMatchObject({ ok: true, events: 50, through: 50 });
    expect(await verifyFile(file, { from: 20, to: 30 })).toMatchObject({ ok: true, events: 11, through: 30 });
  });

  it.each([
    ["data", 'UPDATE events SET data = \'{"n":20,"labels":{"rack":"r-99"}}\' WHERE position = 20'],
    ["metadata", "UPDATE events SET metadata = json_set(metadata, '$.actor.id', 'mallory') WHERE position = 20"],
    ["type", "UPDATE events SET type = 'NodeApproved' WHERE position = 20"],
    ["time", "UPDATE events SET time = '2026-11-29T08:00:00.000Z' WHERE position = 20"],
    ["stream and revision", "UPDATE events SET stream = 'node-n-9', revision = 0 WHERE position = 20"],
  ])("finds a row whose %s was edited, at its position", async (_, sql) => {
    const file = await storeOf50();
    tamper(file, sql);
    const verdict = await verifyFile(file);
    expect(verdict).toMatchObject({ ok: false, through: 19, break: { kind: "edited", position: 20 } });
    expect(verdict.break!.message).toMatch(/position 20 \(node-n-\d@\d\) was changed after it was linked/);
  });

  it("finds deleted rows at the first position missing", async () => {
    const file = await storeOf50();
    tamper(file, "DELETE FROM events WHERE position IN (20, 21)");
    const verdict = await verifyFile(file);
    expect(verdict.break).toMatchObject({ kind: "deleted", position: 20 });
    expect(verdict.break!.message).toMatch(
      /^positions 20–21 are missing before node-n-\d@\d at position 22: rows were deleted$/,
    );
  });

  it("finds two rows swapped, with or without their links, at the first of them", async () => {
    for (const keepLinks of [false, true]) {
      const file = await storeOf50();
      swap(file, 12, 33, keepLinks);
      const verdict = await verifyFile(file);
      expect(verdict.break, `keepLinks ${keepLinks}`).toMatchObject({ kind: "reordered", position: 12 });
      expect(verdict.break!.message).toMatch(/the event linked at position 12 is now at position 33/);
    }
  });

  it("finds a link edited alone", async () => {
    const file = await storeOf50();
    tamper(file, "UPDATE events SET link = ? WHERE position = 20", randomBytes(32));
    expect((await verifyFile(file)).break).toMatchObject({ kind: "link-edited", position: 20 });
  });

  it("finds a row written around the writer, with no link", async () => {
    const file = await storeOf50();
    tamper(
      file,
      "INSERT INTO events (event_id, stream, revision, type, data, metadata, time) VALUES (?, 'node-x', 0, 'NodeApproved', '{}', '{}', ?)",
      randomUUID(),
      new Date().toISOString(),
    );
    expect((await verifyFile(file)).break).toMatchObject({ kind: "unlinked", position: 51, stream: "node-x" });
  });

  it("catches a rewritten chain and a truncated tail only with a signed checkpoint kept outside", async () => {
    const key = auditSigningKey(randomBytes(32));
    const file = await storeOf50();
    const { reader, close } = openChainFile(file);
    const signed = key.sign(40, reader.linkAt(40)!.toString("hex"), "2026-11-29T09:01:00.000Z");
    close();
    expect(await verifyFile(file, { checkpoints: [signed] })).toMatchObject({ ok: true, checkpoints: { checked: 1 } });

    // An edit whose links are all made again after it: the chain alone holds.
    const db = new Database(file);
    db.prepare("UPDATE events SET data = '{\"forged\":true}' WHERE position = 25").run();
    const rows = db
      .prepare(
        "SELECT position, event_id AS id, stream, revision, type, time, data, metadata FROM events ORDER BY position",
      )
      .all() as LinkedFields[];
    let link = db.prepare("SELECT link FROM events WHERE position = 24").pluck().get() as Buffer;
    for (const r of rows.filter((r) => r.position >= 25)) {
      link = eventLink(link, r.position - 1, r);
      db.prepare("UPDATE events SET link = ? WHERE position = ?").run(link, r.position);
    }
    db.close();
    expect((await verifyFile(file)).ok).toBe(true);
    const forged = await verifyFile(file, { checkpoints: [signed] });
    expect(forged.break).toMatchObject({ kind: "checkpoint-link", position: 40 });

    // The tail after a checkpoint removed: only the checkpoint knows it was there.
    const truncated = await storeOf50();
    tamper(truncated, "DELETE FROM events WHERE position > 35");
    expect((await verifyFile(truncated)).ok).toBe(true);
    const cut = await verifyFile(truncated, { checkpoints: [{ ...signed }] });
    expect(cut.break).toMatchObject({ kind: "truncated", position: 36 });

    // A checkpoint whose position or link was altered no longer verifies.
    const altered = await verifyFile(file, { checkpoints: [{ ...signed, position: 41 }] });
    expect(altered.break).toMatchObject({ kind: "checkpoint-signature", position: 41 });
  });

  it("covers the rows of an upgraded store by its genesis, and finds one of them edited", async () => {
    const file = await storeOf50();
    const db = new Database(file);
    db.exec("DROP TABLE chain_genesis; DROP TABLE audit_checkpoints; ALTER TABLE events DROP COLUMN link");
    db.pragma("user_version = 2");
    db.close();
    const store = new SqliteEventStore(file);
    await store.append("node-n-0", [ev(50)], 9);
    await store.close();
    expect(await verifyFile(file)).toMatchObject({ ok: true, events: 51, through: 51 });
    expect(await verifyFile(file, { from: 51 })).toMatchObject({ ok: true, events: 1 });

    tamper(file, "UPDATE events SET data = '{}' WHERE position = 7");
    const verdict = await verifyFile(file);
    expect(verdict.break).toMatchObject({ kind: "genesis", position: 50 });
    // The events after the genesis are still checked on their own.
    expect(await verifyFile(file, { from: 51 })).toMatchObject({ ok: true });
  });
});
