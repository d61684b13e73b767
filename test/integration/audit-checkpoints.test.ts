import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type NatsConnection, type Subscription } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { checkpointSignatureValid, type AuditCheckpoint } from "../../src/events/chain/audit-checkpoint.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { loadOrCreateAuditKey } from "../../src/security/audit-signing-key.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { runShoal } from "../support/shoal-process.ts";
import { storedEvents } from "../support/stored-events.ts";

/**
 * Signed checkpoints from a real orchestrator on the suite's nats-server, on a manual clock: one every
 * CheckpointEvery events or CheckpointInterval, whichever first, none when nothing new was stored; each stored, then
 * published on shoal.audit.checkpoints, signed by the key in DataDir/credentials/audit.key.
 */
const TOKEN = "s3cret";
const EVERY = 6;
const INTERVAL_MS = 60_000;
let nats: TestNatsServer;
let nc: NatsConnection;
let sub: Subscription;
let orchestrator: RunningOrchestrator | undefined;
let config: ShoalConfig;
const clock = new ManualClock();
const received: AuditCheckpoint[] = [];
const adminKey = () => readFileSync(orchestrator!.adminKey!.path, "utf8").trim();

async function act(action: "cordon" | "uncordon"): Promise<void> {
  const res = await fetch(`${orchestrator!.apiUrl}/api/v1/orchestrator/nodes/n-1`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${adminKey()}` },
    body: JSON.stringify({ Action: action }),
  });
  expect(res.status, await res.text()).toBe(200);
}

async function stored(): Promise<AuditCheckpoint[]> {
  const res = await fetch(`${orchestrator!.apiUrl}/api/v1/orchestrator/audit/checkpoints`, {
    headers: { authorization: `Bearer ${adminKey()}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { Items: AuditCheckpoint[] }).Items;
}

async function head(): Promise<number> {
  const res = await fetch(`${orchestrator!.apiUrl}/api/v1/orchestrator/audit/genesis`, {
    headers: { authorization: `Bearer ${adminKey()}` },
  });
  return ((await res.json()) as { Head: number }).Head;
}

/** Until `n` checkpoints were received, or fails naming what was. */
async function receivedCount(n: number): Promise<void> {
  for (let i = 0; i < 200 && received.length < n; i++) await new Promise((r) => setTimeout(r, 25));
  expect(received.map((c) => c.position)).toHaveLength(n);
}

beforeAll(async () => {
  nats = await TestNatsServer.start();
  nc = await connect({ servers: nats.url });
  sub = nc.subscribe("shoal.audit.checkpoints");
  void (async () => {
    for await (const m of sub) received.push(m.json() as AuditCheckpoint);
  })();
  config = orchestratorConfig(nats.url, {
    DataDir: tempDir(),
    "Orchestrator.Auth.Token": TOKEN,
    "Orchestrator.Audit.CheckpointEvery": EVERY,
    "Orchestrator.Audit.CheckpointInterval": INTERVAL_MS,
    // The node's health must not change while the clock is moved: only the test's actions are stored.
    "Orchestrator.NodeManager.DisconnectTimeout": 86_400_000,
    "Orchestrator.NodeManager.UnknownTimeout": 172_800_000,
  });
  orchestrator = await startOrchestrator(config, silentLogger, { clock });
  expect(await joinNode(nc, "n-1", TOKEN)).toMatchObject({ Accepted: true });
});

afterAll(async () => {
  await orchestrator?.stop();
  await nc?.drain();
  await nats?.stop();
});

describe("signed audit checkpoints", () => {
  it("are signed at the interval, only when new events were stored, and every CheckpointEvery events", async () => {
    const key = loadOrCreateAuditKey(config.DataDir);
    expect(key.created).toBe(false);
    expect(statSync(key.path).mode & 0o777).toBe(0o600);

    // The join's events: fewer than EVERY, so the interval signs them.
    expect(received).toEqual([]);
    await clock.advance(INTERVAL_MS);
    await receivedCount(1);
    const first = received[0]!;
    expect(first.position).toBe(await head());
    await expect(checkpointSignatureValid(first)).resolves.toBe(true);
    expect(first.publicKey).toBe(key.key.publicKey);
    expect(first.time).toBe(new Date(clock.now()).toISOString());
    expect(await stored()).toEqual([first]);

    // Nothing new: the next interval signs nothing.
    await clock.advance(INTERVAL_MS);
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toHaveLength(1);

    // EVERY events after the last checkpoint: signed at once, with no clock moved.
    for (let i = 0; i < EVERY / 2; i++) {
      await act("cordon");
      await act("uncordon");
    }
    await receivedCount(2);
    expect(received[1]!.position).toBe(first.position + EVERY);
    expect(await stored()).toEqual(received);

    // A saved checkpoint (as a subscriber appends them) verifies against the log, under the key given.
    const file = join(tempDir(), "checkpoints.ndjson");
    writeFileSync(file, received.map((c) => JSON.stringify(c)).join("\n"));
    const store = join(config.DataDir, "shoal.db");
    const ok = await runShoal([
      "audit",
      "verify",
      "--store",
      store,
      "--checkpoint",
      file,
      `--key=${key.key.publicKey}`,
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    // The file's are the store's own two: each is checked, and counted, once.
    expect(ok.stdout).toMatch(/; 2 signed checkpoints matched$/m);
    // Under another key, the same checkpoints are a break. (`--key=`: a base64url key may begin with a dash.)
    const other = loadOrCreateAuditKey(tempDir()).key.publicKey;
    const untrusted = await runShoal(["audit", "verify", "--store", store, "--checkpoint", file, `--key=${other}`]);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stdout).toContain(`BROKEN at position ${first.position}`);
    expect(untrusted.stdout).toContain("checkpoint-key");
  });

  it("signs what was stored up to a clean stop, its own last word included", async () => {
    await act("cordon");
    const cordoned = await head();
    await orchestrator!.stop();
    orchestrator = undefined;
    await receivedCount(3);
    // The stop wrote the orchestrator's own node stopped after the cordon, and signed that too.
    const last = (await storedEvents(config.DataDir)).at(-1);
    expect(last).toMatchObject({ position: cordoned + 1, stream: "node-node-0", type: "NodeBecameUnhealthy" });
    expect(received[2]!.position).toBe(last?.position);
  });
});
