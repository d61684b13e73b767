import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { runShoal, waitFor } from "../support/shoal-process.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * `shoal leaf config` run as an operator runs it: files meant for another machine (--leaf-dir),
 * the hub's address when the orchestrator listens everywhere, and the output directory's mode.
 * Real orchestrator, real `shoal` process, real leaf nats-server and agent.
 */
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
let leaf: EmbeddedNatsServer | undefined;
let agent: ComputeAgent | undefined;

const leafConfig = (...args: string[]) =>
  runShoal([
    "leaf",
    "config",
    ...args,
    "-c",
    `DataDir=${config.DataDir}`,
    "-c",
    `Orchestrator.NATS.LeafNodes.Port=${config["Orchestrator.NATS.LeafNodes.Port"]}`,
  ]);
const mode = (path: string) => statSync(path).mode & 0o7777;
const LEAF_FILES = ["leaf-shoal.creds", "leaf-system.creds", "leaf.conf"];

beforeAll(async () => {
  config = {
    ...defaultConfig(),
    DataDir: tempDir("shoal-leaf-config-hub-"),
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    "API.TLS.Disable": true, // TLS is not under test here
    "Orchestrator.NATS.TLS.Disable": true,
    "API.Port": 0,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    "Orchestrator.NATS.LeafNodes.Port": await freePort(),
  };
  orchestrator = await startOrchestrator(config, silentLogger);
});

afterAll(async () => {
  await agent?.stop();
  await leaf?.stop();
  await orchestrator?.stop();
});

describe("shoal leaf config", () => {
  it("--leaf-dir: leaf.conf names the files where they will be, and a leaf started from there after they moved works", async () => {
    const out = tempDir("shoal-leaf-out-");
    const elsewhere = join(tempDir("shoal-leaf-machine-"), "etc", "nats", "leaf");
    const port = await freePort();
    const hub = `nats-leaf://127.0.0.1:${config["Orchestrator.NATS.LeafNodes.Port"]}`;
    const written = await leafConfig(
      "--out",
      out,
      "--leaf-dir",
      `${elsewhere}/`,
      "--hub",
      hub,
      "--listen",
      `127.0.0.1:${port}`,
    );
    expect(written).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`Start it: nats-server -c ${elsewhere}/leaf.conf`),
    });
    expect(written.stdout).toContain(`copy the files there`);
    const text = readFileSync(join(out, "leaf.conf"), "utf8");
    expect(text).not.toContain(out);
    const conf = JSON.parse(text) as { pid_file: string; leafnodes: { remotes: { credentials: string }[] } };
    expect(conf.leafnodes.remotes.map((r) => r.credentials)).toEqual([
      join(elsewhere, "leaf-shoal.creds"),
      join(elsewhere, "leaf-system.creds"),
    ]);
    expect(conf.pid_file).toBe(join(elsewhere, "nats-server.pid"));

    // As on the leaf's machine: the files moved to --leaf-dir, nothing left where they were written.
    mkdirSync(elsewhere, { recursive: true, mode: 0o700 });
    for (const file of LEAF_FILES) renameSync(join(out, file), join(elsewhere, file));
    rmSync(out, { recursive: true });
    leaf = await EmbeddedNatsServer.start({
      host: "127.0.0.1",
      port,
      dir: elsewhere,
      logger: silentLogger,
      configFile: join(elsewhere, "leaf.conf"),
    });
    agent = testAgent({
      nodeId: "moved-leaf-node",
      orchestrators: [leaf.url],
      token: orchestrator.joinToken.token,
      heartbeatMs: 300,
    });
    await agent.start();
    await waitFor(
      async () => {
        const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/nodes/moved-leaf-node`);
        return res.status === 200 && ((await res.json()) as { Node: { Health: string } }).Node.Health === "HEALTHY";
      },
      15_000,
      () => "the node behind the moved leaf listed HEALTHY",
    );
  });

  it("--leaf-dir must be an absolute path: refused, nothing written", async () => {
    const out = join(tempDir("shoal-leaf-out-"), "new");
    for (const bad of ["relative/leaf", "./leaf", ""]) {
      expect(await leafConfig("--out", out, "--leaf-dir", bad, "--hub", "nats-leaf://10.0.0.1:7422")).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("--leaf-dir: an absolute path"),
      });
    }
    expect(existsSync(out)).toBe(false);
  });

  it("refuses to guess the hub when the orchestrator listens on every interface, and takes --hub", async () => {
    const out = join(tempDir("shoal-leaf-out-"), "new");
    for (const wildcard of ["0.0.0.0", "::", "[::]"]) {
      const refused = await leafConfig("--out", out, "-c", `Orchestrator.Host=${wildcard}`);
      expect(refused).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("no address a leaf can reach: give --hub nats-leaf://"),
      });
      expect(refused.stderr).toContain(
        `nats-leaf://127.0.0.1:${config["Orchestrator.NATS.LeafNodes.Port"]} for a leaf on this machine`,
      );
    }
    expect(existsSync(out)).toBe(false);
    const given = await leafConfig(
      "--out",
      out,
      "-c",
      "Orchestrator.Host=0.0.0.0",
      "--hub",
      "nats-leaf://10.1.2.3:7422",
    );
    expect(given).toMatchObject({ code: 0, stdout: expect.stringContaining("Hub: nats-leaf://10.1.2.3:7422") });
    // A named host is what the leaf dials, as before.
    expect(await leafConfig("--out", out, "-c", "Orchestrator.Host=127.0.0.1")).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`Hub: nats-leaf://127.0.0.1:${config["Orchestrator.NATS.LeafNodes.Port"]}`),
    });
  });

  it("makes an existing --out directory 0700 and says so; a new one is made 0700", async () => {
    const existing = tempDir("shoal-leaf-out-");
    chmodSync(existing, 0o755);
    const written = await leafConfig("--out", existing, "--hub", "nats-leaf://10.0.0.1:7422");
    expect(written).toMatchObject({ code: 0, stdout: expect.stringContaining(`${existing} was 0755: made 0700`) });
    expect(mode(existing)).toBe(0o700);
    for (const file of LEAF_FILES) expect(mode(join(existing, file))).toBe(0o600);
    // Written again (as before each start of the leaf): already private, nothing to say.
    const again = await leafConfig("--out", existing, "--hub", "nats-leaf://10.0.0.1:7422");
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain("made 0700");

    const fresh = join(tempDir("shoal-leaf-out-"), "a", "b");
    expect((await leafConfig("--out", fresh, "--hub", "nats-leaf://10.0.0.1:7422")).code).toBe(0);
    expect(mode(fresh)).toBe(0o700);
  });

  it("refuses a shared directory (sticky bit, as /tmp) rather than lock others out of it, and a file: nothing written, mode kept", async () => {
    const shared = tempDir("shoal-leaf-shared-");
    chmodSync(shared, 0o1777);
    const refused = await leafConfig("--out", shared, "--hub", "nats-leaf://10.0.0.1:7422");
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining("is a shared directory (sticky bit") });
    expect(mode(shared)).toBe(0o1777);
    expect(readdirSync(shared)).toEqual([]);
    const file = join(tempDir("shoal-leaf-out-"), "a-file");
    writeFileSync(file, "");
    expect(await leafConfig("--out", file, "--hub", "nats-leaf://10.0.0.1:7422")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`--out: ${file} is not a directory`),
    });
  });

  // Only root can give a directory away (and only root could chmod it, which is what must not happen).
  it.skipIf(process.getuid?.() !== 0)(
    "refuses another user's directory: nothing written, mode and owner kept",
    async () => {
      const theirs = tempDir("shoal-leaf-theirs-");
      chmodSync(theirs, 0o755);
      chownSync(theirs, 65534, 65534);
      const refused = await leafConfig("--out", theirs, "--hub", "nats-leaf://10.0.0.1:7422");
      expect(refused).toMatchObject({
        code: 1,
        stderr: expect.stringContaining(`--out: ${theirs} belongs to another user (uid 65534)`),
      });
      expect(mode(theirs)).toBe(0o755);
      expect(statSync(theirs).uid).toBe(65534);
      expect(readdirSync(theirs)).toEqual([]);
    },
  );
});
