import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { runShoal } from "../support/shoal-process.ts";

const RECORDER = pathToFileURL(join(import.meta.dirname, "../support/record-imports/register.mjs")).href;

/** Server-side libraries: a CLI call that only talks to the REST API must not load any of them. */
const SERVER_PACKAGES = [
  "better-sqlite3",
  "@kurrent/kurrentdb-client",
  "nats",
  "nkeys.js",
  "fastify",
  "effect",
  "xstate",
  "pino",
  "msgpackr",
  "bcryptjs",
];
/** Shoal's server-side folders (compiled, under dist/). */
const SERVER_FOLDERS = [
  "src/api/",
  "src/actors/",
  "src/compute/",
  "src/events/",
  "src/logging/",
  "src/orchestrator/",
  "src/projections/",
  "src/transport/",
  "machines/",
];
/** Dependency-free rules the CLI checks its input with, shared with the server on purpose. */
// Leaf modules of plain rules and constants (no imports): config's defaults for job limits and container confinement.
const SHARED_RULES = [
  "src/events/catalog/node-id.js",
  "machines/execution/execution-states.js",
  "machines/job/job-limits.js",
  "src/compute/executor/container-confinement.js",
  // What a result archive holds, read by `shoal job get` as the node writes it.
  "src/events/catalog/publisher-types.js",
  "src/compute/publisher/tar-header.js",
];

let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let apiPort: string;
let adminKey: string;
const dataDir = tempDir();

beforeAll(async () => {
  nats = await TestNatsServer.start();
  orchestrator = await startOrchestrator(orchestratorConfig(nats.url, { DataDir: dataDir }), silentLogger);
  apiPort = new URL(orchestrator.apiUrl).port;
  adminKey = readFileSync(adminApiKeyPath(dataDir), "utf8").trim();
});

afterAll(async () => {
  await orchestrator?.stop();
  await nats?.stop();
});

/** Runs `bin/shoal` (the compiled CLI) with a module-resolution hook that records every module it loads. */
async function runRecorded(args: string[]) {
  const log = join(tempDir(), "imports.log");
  writeFileSync(log, "");
  const res = await runShoal(args, { NODE_OPTIONS: `--import=${RECORDER}`, SHOAL_TEST_IMPORT_LOG: log });
  const urls = readFileSync(log, "utf8").split("\n").filter(Boolean);
  const packages = new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []));
  const shoal = [...new Set(urls.flatMap((u) => /\/dist\/((?:src|machines)\/.+)$/.exec(u)?.[1] ?? []))].sort();
  return { ...res, packages: [...packages].sort(), shoal };
}

describe("the compiled CLI loads only what a command needs", () => {
  it("`shoal --help` loads the entry point and nothing from node_modules or the server side", async () => {
    const res = await runRecorded(["--help"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain("Usage: shoal <command>");
    // The hook saw the CLI itself: an empty record would prove nothing.
    expect(res.shoal).toContain("src/cli/main.js");
    expect(res.packages).toEqual([]);
    expect(res.shoal.filter((m) => !m.startsWith("src/cli/") || m.startsWith("src/cli/commands/"))).toEqual([]);
  });

  it("`shoal node list` against a running orchestrator loads no store, NATS, Fastify or Effect", async () => {
    const res = await runRecorded(["node", "list", "--api-host", "127.0.0.1", "--api-port", apiPort]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^node-0 +Requester +APPROVED +HEALTHY/m);
    expect(res.shoal).toContain("src/cli/commands/node-command.js");
    expect(res.packages.filter((p) => SERVER_PACKAGES.includes(p))).toEqual([]);
    expect(res.shoal.filter((m) => SERVER_FOLDERS.some((f) => m.startsWith(f)) && !SHARED_RULES.includes(m))).toEqual(
      [],
    );
    // Not even the yaml library: only YAML output or a config file needs it.
    expect(res.packages).toEqual([]);
  });

  it("`shoal job list`, `job executions` and `job get` load no store, NATS, Fastify or Effect either", async () => {
    const api = ["--api-host", "127.0.0.1", "--api-port", apiPort];
    for (const args of [
      ["job", "list", ...api],
      ["job", "executions", "j-none", ...api],
      ["job", "get", "j-none", ...api],
    ]) {
      const res = await runRecorded(args);
      // An unknown job is the server's 404: the command ran its whole course.
      expect(res.code, res.stderr).toBe(args[1] === "list" ? 0 : 1);
      expect(res.shoal).toContain(`src/cli/commands/job-${args[1]}-command.js`);
      expect(res.packages).toEqual([]);
      expect(res.shoal.filter((m) => SERVER_FOLDERS.some((f) => m.startsWith(f)) && !SHARED_RULES.includes(m))).toEqual(
        [],
      );
    }
  });

  it("`shoal events` loads no store, NATS, Fastify or Effect, whether it prints a page or streams NDJSON", async () => {
    const api = ["--api-host", "127.0.0.1", "--api-port", apiPort, "--api-key", adminKey];
    for (const output of ["table", "ndjson"]) {
      const res = await runRecorded(["events", "--category", "node", "--output", output, ...api]);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain("NodeRegistered");
      expect(res.shoal).toContain("src/cli/commands/events-command.js");
      expect(res.packages).toEqual([]);
      expect(res.shoal.filter((m) => SERVER_FOLDERS.some((f) => m.startsWith(f)) && !SHARED_RULES.includes(m))).toEqual(
        [],
      );
    }
  });

  it("`shoal agent`, `shoal version` and `shoal config list` load no store, NATS, Fastify or Effect", async () => {
    const api = ["--api-host", "127.0.0.1", "--api-port", apiPort];
    for (const args of [
      ["agent", "node", "-o", "json", ...api],
      ["version", ...api],
      ["config", "list"],
    ]) {
      const res = await runRecorded(args);
      expect(res.code, res.stderr).toBe(0);
      expect(res.shoal).toContain(`src/cli/commands/${args[0]}-command.js`);
      expect(res.packages, args.join(" ")).toEqual([]);
      expect(res.shoal.filter((m) => SERVER_FOLDERS.some((f) => m.startsWith(f)) && !SHARED_RULES.includes(m))).toEqual(
        [],
      );
    }
  });

  it("`shoal serve` does load the server side (the recorder sees what a command needs)", async () => {
    // A bad config value stops serve after its modules are loaded and before anything starts.
    const res = await runRecorded([
      "serve",
      "-c",
      "EventStore.URL=http://not-esdb",
      "-c",
      `DataDir=${tempDir()}`,
      "-c",
      "API.Port=0",
      "-c",
      "Orchestrator.Port=0",
    ]);
    expect(res.code).toBe(1);
    expect(res.packages).toEqual(expect.arrayContaining(["effect", "fastify"]));
    expect(res.shoal).toContain("src/orchestrator/orchestrator.js");
  });
});

describe("the CLI never prints control characters it received", () => {
  // eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
  const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/;

  it("escapes them in error messages from the API", async () => {
    const res = await runShoal([
      "node",
      "describe",
      "\u001b[2J\u001b]0;owned\u0007\u202eevil",
      "--api-host",
      "127.0.0.1",
      "--api-port",
      apiPort,
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("Error: node not found: \\u001b[2J\\u001b]0;owned\\u0007\\u202eevil");
    expect(res.stderr).not.toMatch(RAW);
  });

  it("escapes them in a node's history: table, JSON and YAML", async () => {
    const reason = "ok\u001b[31m red\u009b0m\r\nnext";
    const nc = await connect({ servers: nats.url });
    try {
      const joined = await joinNode(nc, "node-esc", orchestrator.joinToken.token);
      expect(joined).toMatchObject({ Accepted: true });
    } finally {
      await nc.drain();
    }
    const reject = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/nodes/node-esc`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({ Action: "reject", Message: reason }),
    });
    expect(reject.status).toBe(200);

    const api = ["--api-host", "127.0.0.1", "--api-port", apiPort, "--api-key", adminKey];
    const table = await runShoal(["node", "history", "node-esc", ...api]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain("ok\\u001b[31m red\\u009b0m; next");
    expect(table.stdout).not.toMatch(RAW);
    // One event per line: the newline in the reason did not break the table.
    // Header, NodeRegistered, NodeCredentialBound, NodeRejected and NodeCredentialRevoked (both with the reason).
    expect(table.stdout.trimEnd().split("\n")).toHaveLength(5);

    for (const format of ["json", "yaml"]) {
      const out = await runShoal(["node", "history", "node-esc", "--output", format, ...api]);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout, format).not.toMatch(RAW);
      expect(out.stdout, format).toMatch(/\\u009b/);
    }
    // JSON output stays valid JSON with the original value.
    const json = await runShoal(["node", "history", "node-esc", "--output", "json", ...api]);
    expect(JSON.parse(json.stdout).Items.at(-1).metadata.reason).toBe(reason);
  });
});
