import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { runShoal } from "../support/shoal-process.ts";

/**
 * `shoal audit verify` as an auditor runs it (the compiled CLI) against a real orchestrator: over the API (the
 * verdict is worked out by the CLI from the rows handed over) and on the store file directly; then the file is
 * altered while the orchestrator is stopped, and both find the break at its position.
 */
const TOKEN = "s3cret";
const USERS: AuthUser[] = [
  { Username: "alice", Password: "alice's password", Capabilities: [{ Actions: ["read:node", "write:node"] }] },
  { Alias: "auditor", Username: "audit", Password: "audit password", Capabilities: [{ Actions: ["read:history"] }] },
];
const ALICE = `Basic ${Buffer.from("alice:alice's password").toString("base64")}`;

let nats: TestNatsServer;
let orchestrator: RunningOrchestrator | undefined;
let config: ShoalConfig;
let file: string;
const verify = (...args: string[]) => {
  const port = new URL(orchestrator!.apiUrl).port;
  return runShoal([
    "audit",
    "verify",
    "--api-port",
    port,
    "--username",
    "audit",
    "--password",
    "audit password",
    ...args,
  ]);
};

beforeAll(async () => {
  nats = await TestNatsServer.start();
  const dataDir = tempDir();
  file = join(dataDir, "shoal.db");
  config = orchestratorConfig(nats.url, {
    DataDir: dataDir,
    "Orchestrator.Auth.Token": TOKEN,
    "Orchestrator.NodeManager.ManualApproval": true,
    "API.Auth.Users": USERS,
  });
  orchestrator = await startOrchestrator(config, silentLogger);
  const nc = await connect({ servers: nats.url });
  try {
    for (const id of ["n-1", "n-2"]) expect(await joinNode(nc, id, TOKEN)).toMatchObject({ Accepted: true });
  } finally {
    await nc.drain();
  }
  for (const [id, body] of [
    ["n-1", { Action: "approve", Message: "racked" }],
    ["n-2", { Action: "approve", Message: "checked" }],
    ["n-1", { Action: "cordon", Message: "disk" }],
  ] as const) {
    const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/nodes/${id}`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: ALICE },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
  }
});

afterAll(async () => {
  await orchestrator?.stop();
  await nats?.stop();
});

describe("shoal audit verify", () => {
  it("refuses bad input naming what is wrong, reading nothing", async () => {
    const bad = join(tempDir(), "checkpoints.ndjson");
    writeFileSync(
      bad,
      `${JSON.stringify({ position: 3, link: "AB", time: "t", keyId: "k", publicKey: "p", signature: "s" })}\n`,
    );
    const cases: [string[], RegExp][] = [
      [["--checkpoint", bad], /--checkpoint .*checkpoints\.ndjson: link must be 64 lowercase hex digits/],
      [["--key", "not-a-key"], /--key must be an ed25519 public key, 32 bytes in base64url/],
      [["--from", "9", "--to", "3"], /--from \(9\) is after --to \(3\)/],
      [["--from", "x"], /--from must be a whole number/],
    ];
    for (const [args, message] of cases) {
      const res = await runShoal(["audit", "verify", "--store", file, ...args]);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr, args.join(" ")).toMatch(message);
    }
    const missing = await runShoal(["audit", "verify", "--store", join(tempDir(), "none.db")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^Error: \/.*none\.db: no such store file\n$/);
  });

  it("refuses a --from beyond the newest event, naming the flag, over the API and on the store file", async () => {
    const head = (await verify("--quiet")).stdout.match(/through position (\d+)/)?.[1];
    expect(head).toBeDefined();
    const from = String(Number(head) + 4000);
    for (const res of [
      await verify("--from", from),
      await runShoal(["audit", "verify", "--store", file, "--from", from]),
    ]) {
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(new RegExp(`^Error: --from ${from} is beyond the newest event \\(${head}\\)\n`));
    }
    // A start whose link is gone (the row before it deleted) is said, not thrown as a stack trace.
    const copy = join(tempDir(), "copy.db");
    const live = new Database(file, { readonly: true });
    live.exec(`VACUUM INTO '${copy}'`);
    live.close();
    const altered = new Database(copy);
    altered.prepare("DELETE FROM events WHERE position = 3").run();
    altered.close();
    const gone = await runShoal(["audit", "verify", "--store", copy, "--from", "4"]);
    expect(gone.code, gone.stderr).toBe(2);
    expect(gone.stderr).toMatch(/^Error: --from 4: position 3 holds no linked event to start from/);
  });

  it("holds over the API and on the store file; after a row is edited while stopped, both name its position", async () => {
    const viaApi = await verify();
    expect(viaApi.code, viaApi.stderr).toBe(0);
    expect(viaApi.stdout).toMatch(/^the chain holds: \d+ events checked through position \d+/);
    const onFile = await runShoal(["audit", "verify", "--store", file]);
    expect(onFile.code, onFile.stderr).toBe(0);
    expect(onFile.stdout).toBe(viaApi.stdout);

    // Without read:history the rows are not handed over.
    const refused = await fetch(`${orchestrator!.apiUrl}/api/v1/orchestrator/audit/chain`, {
      headers: { authorization: ALICE },
    });
    expect(refused.status).toBe(403);

    await orchestrator!.stop();
    orchestrator = undefined;
    const db = new Database(file);
    const row = db
      .prepare("SELECT position, stream, revision FROM events WHERE type = 'NodeApproved' AND stream = 'node-n-2'")
      .get() as { position: number; stream: string; revision: number };
    db.prepare("UPDATE events SET metadata = json_set(metadata, '$.reason', 'never checked') WHERE position = ?").run(
      row.position,
    );
    db.close();
    orchestrator = await startOrchestrator(config, silentLogger);

    const broken = await verify();
    expect(broken.code, broken.stderr).toBe(1);
    expect(broken.stdout).toContain(
      `BROKEN at position ${row.position} (${row.stream}@${row.revision}): edited: the event at position ${row.position}`,
    );
    expect(broken.stdout).toContain(`the chain held through position ${row.position - 1}`);
    const brokenOnFile = await runShoal(["audit", "verify", "--store", file]);
    expect(brokenOnFile.code).toBe(1);
    expect(brokenOnFile.stdout).toBe(broken.stdout);
    // A walk that ends before it does not reach it.
    const before = await verify("--to", String(row.position - 1));
    expect(before.code, before.stdout).toBe(0);
  });
});
