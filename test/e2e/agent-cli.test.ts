import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { SHOAL_VERSION } from "../../src/version.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { runShoal } from "../support/shoal-process.ts";

/**
 * `shoal agent …`, `shoal version` and `shoal config list` as a user runs them (bin/shoal, a process a call)
 * against a real orchestrator, or, for config list and an unreachable server, against none.
 */
const TOKEN = "join-token-that-must-not-show";
const METRICS_TOKEN = "metrics-token-that-must-not-show";
const OPS_PASSWORD = "ops password, never printed";
const USERS: AuthUser[] = [
  { Username: "ops", Password: OPS_PASSWORD, Capabilities: [{ Actions: ["read:agent", "read:node"] }] },
  { Username: "viewer", Password: "viewer's password", Capabilities: [{ Actions: ["read:node"] }] },
];

let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let at: string[];
const ops = () => [...at, "--username", "ops", "--password", OPS_PASSWORD];
/** No server anywhere near: a port nothing listens on, and a DataDir with no admin key. */
const NOWHERE = { SHOAL_API_PORT: "1", SHOAL_DATADIR: tempDir() };

beforeAll(async () => {
  nats = await TestNatsServer.start();
  orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, {
      "Orchestrator.Auth.Token": TOKEN,
      "API.Auth.Users": USERS,
      "Compute.Metrics.BearerToken": METRICS_TOKEN,
    }),
    silentLogger,
  );
  at = ["--api-host", "127.0.0.1", "--api-port", new URL(orchestrator.apiUrl).port];
});

afterAll(async () => {
  await orchestrator?.stop();
  await nats?.stop();
});

describe("shoal agent", () => {
  it("alive, node and version print what the agent routes answer", async () => {
    const alive = await runShoal(["agent", "alive", ...at]);
    expect(alive.code, alive.stderr).toBe(0);
    expect(alive.stdout.trim()).toBe("Status: OK");

    const node = await runShoal(["agent", "node", "-o", "json", ...at]);
    expect(node.code, node.stderr).toBe(0);
    expect(JSON.parse(node.stdout)).toMatchObject({ NodeID: "node-0", NodeType: "Requester" });

    const version = await runShoal(["agent", "version", ...at]);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toMatch(new RegExp(`^MAJOR +MINOR +GITVERSION +GOOS +GOARCH\n.* v${SHOAL_VERSION} `));
    const asYaml = await runShoal(["agent", "version", "-o", "yaml", ...at]);
    const served = await (await fetch(`${orchestrator.apiUrl}/api/v1/agent/version`)).json();
    expect(parseYaml(asYaml.stdout)).toEqual(served);
  });

  it("config prints the orchestrator's configuration by section, secrets redacted, to read:agent only", async () => {
    const res = await runShoal(["agent", "config", ...ops()]);
    expect(res.code, res.stderr).toBe(0);
    const config = parseYaml(res.stdout);
    expect(config.API.Host).toBe("127.0.0.1");
    expect(config.Orchestrator.Auth.Token).toBe("<redacted>");
    expect(config.Compute.Metrics.BearerToken).toBe("<redacted>");
    expect(config.API.Auth.Users).toEqual([
      { Username: "ops", Password: "<redacted>", Capabilities: [{ Actions: ["read:agent", "read:node"] }] },
      { Username: "viewer", Password: "<redacted>", Capabilities: [{ Actions: ["read:node"] }] },
    ]);
    expect(res.stdout).not.toContain(TOKEN);
    expect(res.stdout).not.toContain(METRICS_TOKEN);
    expect(res.stdout).not.toContain(OPS_PASSWORD);

    const viewer = await runShoal([
      "agent",
      "config",
      ...at,
      "--username",
      "viewer",
      "--password",
      "viewer's password",
    ]);
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toContain("does not have the capability read:agent");
    const anonymous = await runShoal(["agent", "config", ...at], { SHOAL_DATADIR: tempDir() });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toContain("authentication required: GET /api/v1/agent/config needs read:agent");
  });

  it("says when the orchestrator is not there, exit 1", async () => {
    const res = await runShoal(["agent", "alive", "-c", "API.TLS.Disable=true"], NOWHERE);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("cannot reach the Shoal API at http://127.0.0.1:1");
  });

  it("each command has its own help with examples; a wrong one is a usage error", async () => {
    for (const sub of ["alive", "node", "version", "config"]) {
      const help = await runShoal(["agent", sub, "--help"]);
      expect(help.code, sub).toBe(0);
      expect(help.stdout, sub).toContain(`Usage: shoal agent ${sub} [options]`);
      expect(help.stdout, sub).toContain(`Examples:\n  shoal agent ${sub}`);
    }
    const top = await runShoal(["agent", "--help"]);
    expect(top.stdout).toMatch(/alive .*\n {2}node .*\n {2}version .*\n {2}config /);
    for (const args of [
      ["agent", "bogus"],
      ["agent", "node", "extra"],
      ["agent", "config", "-o", "table"],
    ]) {
      const res = await runShoal([...args, ...at]);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr, args.join(" ")).toMatch(/^Error: .*\nRun 'shoal agent/);
    }
  });
});

describe("shoal version", () => {
  it("prints the client's version and the server's", async () => {
    const table = await runShoal(["version", ...at]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toBe(`CLIENT  SERVER\nv${SHOAL_VERSION}  v${SHOAL_VERSION}\n`);
    const json = await runShoal(["version", "-o", "json", ...at]);
    const served = await (await fetch(`${orchestrator.apiUrl}/api/v1/agent/version`)).json();
    expect(JSON.parse(json.stdout)).toEqual({ clientVersion: served, serverVersion: served });
  });

  it("still prints the client's when the server cannot be reached, with a note, exit 0", async () => {
    const res = await runShoal(["version", "-c", "API.TLS.Disable=true"], NOWHERE);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`CLIENT  SERVER\nv${SHOAL_VERSION}  -\n`);
    expect(res.stderr).toContain(
      "Note: the server's version is unknown: cannot reach the Shoal API at http://127.0.0.1:1",
    );
    const yaml = await runShoal(["version", "-o", "yaml", "-c", "API.TLS.Disable=true"], NOWHERE);
    expect(yaml.code).toBe(0);
    expect(Object.keys(parseYaml(yaml.stdout))).toEqual(["clientVersion"]);
    const client = await runShoal(["version", "--client"], NOWHERE);
    expect(client).toMatchObject({ code: 0, stdout: `CLIENT\nv${SHOAL_VERSION}\n`, stderr: "" });
  });

  it("has its help with examples; --version stays the client's alone", async () => {
    const help = await runShoal(["version", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Examples:\n  shoal version\n");
    expect((await runShoal(["--version"])).stdout).toBe(`shoal v${SHOAL_VERSION}\n`);
    expect((await runShoal(["version", "--output", "xml"])).code).toBe(2);
  });
});

describe("shoal config list", () => {
  it("shows every key's value and where it came from, secrets redacted, with no server", async () => {
    const dir = tempDir();
    const file = join(dir, "shoal.yaml");
    writeFileSync(file, "Orchestrator:\n  NodeManager:\n    DisconnectTimeout: 2m\nLogging:\n  Level: debug\n");
    const res = await runShoal(
      [
        "config",
        "list",
        "--config",
        file,
        "-c",
        "Logging.Level=warn",
        "-c",
        `Orchestrator.Auth.Token=${TOKEN}`,
        "-c",
        "EventStore.URL=kurrentdb://admin:changeit@db1:2113,db2:2113?tls=true",
      ],
      { ...NOWHERE, SHOAL_API_PORT: "2000", SHOAL_DATADIR: dir, SHOAL_COMPUTE_METRICS_BEARERTOKEN: METRICS_TOKEN },
    );
    expect(res.code, res.stderr).toBe(0);
    const row = (key: string) =>
      res.stdout
        .split("\n")
        .find((l) => l.startsWith(`${key} `))
        ?.split(/ {2,}/);
    expect(res.stdout.split("\n")[0]).toMatch(/^KEY +SOURCE +VALUE$/);
    expect(row("API.Port")).toEqual(["API.Port", "env SHOAL_API_PORT", "2000"]);
    expect(row("Orchestrator.NodeManager.DisconnectTimeout")).toEqual([
      "Orchestrator.NodeManager.DisconnectTimeout",
      `file ${file}`,
      "2m",
    ]);
    expect(row("Logging.Level")).toEqual(["Logging.Level", "flag -c", "warn"]);
    expect(row("Orchestrator.Auth.Token")).toEqual(["Orchestrator.Auth.Token", "flag -c", "<redacted>"]);
    expect(row("Compute.Metrics.BearerToken")).toEqual([
      "Compute.Metrics.BearerToken",
      "env SHOAL_COMPUTE_METRICS_BEARERTOKEN",
      "<redacted>",
    ]);
    expect(row("EventStore.URL")).toEqual([
      "EventStore.URL",
      "flag -c",
      "kurrentdb://admin:<redacted>@db1:2113,db2:2113?tls=true",
    ]);
    expect(row("API.Host")).toEqual(["API.Host", "default", "0.0.0.0"]);
    expect(res.stdout).not.toContain(TOKEN);
    expect(res.stdout).not.toContain(METRICS_TOKEN);
    expect(res.stdout).not.toContain("changeit");

    const json = await runShoal(["config", "list", "-o", "json", "-c", "API.Port=3000"], NOWHERE);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as { Key: string; Value: string; Source: string }[];
    expect(rows.find((r) => r.Key === "API.Port")).toEqual({ Key: "API.Port", Value: "3000", Source: "flag -c" });
    expect(rows.find((r) => r.Key === "Compute.Heartbeat.Interval")).toEqual({
      Key: "Compute.Heartbeat.Interval",
      Value: "15s",
      Source: "default",
    });
  });

  it("refuses a bad value as any command does, naming its source; has its help with examples", async () => {
    const bad = await runShoal(["config", "list", "-c", "API.Port=http"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Config error: -c API.Port=http: API.Port: expected a whole number");
    const help = await runShoal(["config", "list", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Examples:\n  shoal config list\n");
    expect((await runShoal(["config", "show"])).code).toBe(2);
  });
});
