import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { ShoalProcess, runShoal, waitFor } from "../support/shoal-process.ts";

// Each CLI call is a process start; on a loaded two-core machine a test makes several.
const SLOW = { timeout: 120_000 };

/**
 * `shoal devstack` and `shoal node …` as a user runs them: the generated admin key found by the
 * CLI, and every way of passing credentials, with the identity they record in the history.
 */

const processes: ShoalProcess[] = [];
afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null) await p.kill("SIGTERM");
});

async function devstack(dataDir: string, extra: string[] = []) {
  const apiPort = await freePort();
  const p = ShoalProcess.start([
    "devstack",
    "--compute",
    "1",
    "-c",
    `DataDir=${dataDir}`,
    "-c",
    "API.Host=127.0.0.1",
    "-c",
    `API.Port=${apiPort}`,
    "-c",
    "Orchestrator.Host=127.0.0.1",
    "-c",
    `Orchestrator.Port=${await freePort()}`,
    "-c",
    "Orchestrator.NodeManager.ManualApproval=true",
    ...extra,
  ]);
  processes.push(p);
  await p.waitForOutput("Shoal devstack is running", 60_000);
  // An empty DataDir for the CLI unless a test says otherwise: no key file is found by accident.
  const env = { SHOAL_API_HOST: "127.0.0.1", SHOAL_API_PORT: String(apiPort), SHOAL_DATADIR: tempDir() };
  const listed = async () =>
    (await (await fetch(`http://127.0.0.1:${apiPort}/api/v1/orchestrator/nodes`)).text()).includes('"node-1"');
  await waitFor(listed, 30_000, () => "node-1 listed");
  return { p, env };
}

const actors = async (env: Record<string, string>, id: string) => {
  const res = await runShoal(["node", "history", id, "--output", "json"], env);
  if (res.code !== 0) throw new Error(res.stderr);
  return (JSON.parse(res.stdout) as { Items: any[] }).Items.map(
    (e) => `${e.type} ${e.metadata.actor.type}:${e.metadata.actor.id}`,
  );
};

describe("devstack with no users: the generated admin key", SLOW, () => {
  const dataDir = tempDir("shoal-e2e-auth-");
  let env: Record<string, string>;
  let key: string;

  it("creates the key under DataDir/devstack/credentials and prints where, never the key", async () => {
    const started = await devstack(dataDir);
    env = started.env;
    const file = join(dataDir, "devstack", "credentials", "api-admin-key");
    expect(started.p.stdout).toContain(`Admin API key created in ${file}`);
    expect(started.p.stdout).toContain(`SHOAL_DATADIR=${dataDir}`);
    key = readFileSync(file, "utf8").trim();
    expect(started.p.stdout + started.p.stderr).not.toContain(key);
  });

  it("refuses a write without credentials, saying where the CLI looked, and writes nothing", async () => {
    const res = await runShoal(["node", "approve", "node-1"], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      "Failed to approve node node-1: authentication required: PUT /api/v1/orchestrator/nodes/:id needs write:node",
    );
    expect(res.stderr).toContain(
      `no admin key at ${join(env.SHOAL_DATADIR!, "devstack", "credentials", "api-admin-key")}`,
    );
    expect((await runShoal(["node", "history", "node-1"], env)).stderr).toContain("needs read:history");
  });

  it("finds the devstack's key under SHOAL_DATADIR, and takes --api-key and SHOAL_API_KEY; the history names the admin", async () => {
    expect(
      await runShoal(["node", "reject", "node-1", "-m", "not yet"], { ...env, SHOAL_DATADIR: dataDir }),
    ).toMatchObject({ code: 0, stdout: "Ok\n" });
    expect(await runShoal(["node", "approve", "node-1", "--api-key", key], env)).toMatchObject({
      code: 0,
      stdout: "Ok\n",
    });
    expect(await actors({ ...env, SHOAL_API_KEY: key }, "node-1")).toEqual([
      "NodeRegistered node:node-1",
      "NodeCredentialBound node:node-1",
      "NodeRejected operator:admin",
      "NodeCredentialRevoked operator:admin",
      "NodeApproved operator:admin",
      "NodeCredentialBound operator:admin",
    ]);
    const wrong = await runShoal(["node", "delete", "node-1", "--api-key", `${key}x`], {
      ...env,
      SHOAL_DATADIR: dataDir,
    });
    expect(wrong).toMatchObject({
      code: 1,
      stderr: "Failed to delete node node-1: invalid API key (sent --api-key)\n",
    });
  });
});

describe("devstack with API.Auth.Users", SLOW, () => {
  const dataDir = tempDir("shoal-e2e-auth-");
  const users = [
    {
      Alias: "ops",
      Username: "alice",
      Password: bcrypt.hashSync("alice's password", 4),
      Capabilities: [{ Actions: ["read:node", "write:node", "read:history"] }],
    },
    { Alias: "viewer", APIKey: "viewer-key-0123456789abcdef", Capabilities: [{ Actions: ["read:node"] }] },
    { Alias: "auditor", APIKey: "auditor-key-0123456789abcdef", Capabilities: [{ Actions: ["read:history"] }] },
  ];
  let env: Record<string, string>;

  it("generates no key and takes --username/--password, SHOAL_API_USERNAME/SHOAL_API_PASSWORD and API keys", async () => {
    const started = await devstack(dataDir, ["-c", `API.Auth.Users=${JSON.stringify(users)}`]);
    env = started.env;
    expect(started.p.stdout).not.toContain("Admin API key");
    expect(started.p.stdout).toContain("add --api-key or --username/--password");

    expect(
      await runShoal(["node", "reject", "node-1", "--username", "alice", "--password", "alice's password"], env),
    ).toMatchObject({ code: 0 });
    expect(
      await runShoal(["node", "approve", "node-1"], {
        ...env,
        SHOAL_API_USERNAME: "ALICE",
        SHOAL_API_PASSWORD: "alice's password",
      }),
    ).toMatchObject({ code: 0 });
    expect(await actors({ ...env, SHOAL_API_KEY: "auditor-key-0123456789abcdef" }, "node-1")).toEqual([
      "NodeRegistered node:node-1",
      "NodeCredentialBound node:node-1",
      "NodeRejected operator:ops",
      "NodeCredentialRevoked operator:ops",
      "NodeApproved operator:ops",
      "NodeCredentialBound operator:ops",
    ]);
  });

  it("says 403 for a user without the capability and 401 for a wrong password", async () => {
    const viewer = await runShoal(["node", "delete", "node-1"], {
      ...env,
      SHOAL_API_KEY: "viewer-key-0123456789abcdef",
    });
    expect(viewer).toMatchObject({
      code: 1,
      stderr: "Failed to delete node node-1: user viewer does not have the capability write:node\n",
    });
    const wrong = await runShoal(["node", "delete", "node-1", "--username", "alice", "--password", "guess"], env);
    expect(wrong).toMatchObject({
      code: 1,
      stderr: "Failed to delete node node-1: invalid username or password (sent --username/--password)\n",
    });
    const half = await runShoal(["node", "list", "--username", "alice"], env);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain("give both a username and a password");
    // the three actions before, each with its key event; the refusals added none
    expect((await actors({ ...env, SHOAL_API_KEY: "auditor-key-0123456789abcdef" }, "node-1")).length).toBe(6);
  });

  it("falls back to anonymous read when a key file left from before is refused, and says what it sent", async () => {
    const stale = join(env.SHOAL_DATADIR!, "credentials", "api-admin-key");
    mkdirSync(dirname(stale), { recursive: true });
    writeFileSync(stale, "shoal_api_from-before-users-were-configured\n");
    const list = await runShoal(["node", "list", "--output", "json"], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('"node-1"');
    const write = await runShoal(["node", "delete", "node-1"], env);
    expect(write.code).toBe(1);
    expect(write.stderr).toContain(
      `authentication required: PUT /api/v1/orchestrator/nodes/:id needs write:node (sent the admin key in ${stale}, then no credentials`,
    );
  });
});
