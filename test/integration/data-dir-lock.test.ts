import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { StartupError } from "../../src/errors/startup-error.ts";
import { LOCK_OWNER_FILE, lockDataDir } from "../../src/fs/data-dir-lock.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";

const ROOT = join(import.meta.dirname, "../..");
const HOLDER = `
import { lockDataDir } from "./src/fs/data-dir-lock.ts";
lockDataDir(process.argv.at(-1), "test holder");
process.stdout.write("locked\\n");
setInterval(() => undefined, 1000);
`;

describe("the DataDir lock", () => {
  it("refuses a second holder in the same process, naming the first, until released", () => {
    const dir = tempDir();
    const first = lockDataDir(dir, "shoal serve");
    const owner = JSON.parse(readFileSync(join(dir, LOCK_OWNER_FILE), "utf8"));
    expect(owner).toMatchObject({ pid: process.pid, command: "shoal serve" });
    expect(() => lockDataDir(dir, "shoal serve")).toThrow(StartupError);
    expect(() => lockDataDir(dir, "shoal serve")).toThrow(
      new RegExp(
        `^DataDir ${dir} is in use by shoal serve \\(pid ${process.pid} on .*, since .*\\); stop it, or give this process another DataDir$`,
      ),
    );
    // The refused attempts changed nothing: the first still holds it.
    expect(JSON.parse(readFileSync(join(dir, LOCK_OWNER_FILE), "utf8"))).toEqual(owner);
    first.release();
    expect(existsSync(join(dir, LOCK_OWNER_FILE))).toBe(false);
    lockDataDir(dir, "again").release();
  });

  it("is another process's until that process dies, kill -9 included; nothing to clean up", async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", HOLDER, dir], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => d.toString().includes("locked") && resolve());
      child.once("exit", (code) => reject(new Error(`holder exited (${code})`)));
    });
    expect(() => lockDataDir(dir, "shoal serve")).toThrow(new RegExp(`in use by test holder \\(pid ${child.pid} `));
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    const lock = lockDataDir(dir, "shoal serve"); // the kernel released it; the stale owner file is simply overwritten
    expect(JSON.parse(readFileSync(join(dir, LOCK_OWNER_FILE), "utf8"))).toMatchObject({
      pid: process.pid,
      command: "shoal serve",
    });
    lock.release();
  });
});

describe("a second orchestrator on the same DataDir", () => {
  let nats: TestNatsServer;
  let first: RunningOrchestrator;
  let config: ShoalConfig;
  afterAll(async () => {
    await first?.stop();
    await nats?.stop();
  });

  it("is refused before it touches anything, and the first keeps serving", async () => {
    nats = await TestNatsServer.start();
    // No NodeID: the first generates one and keeps it in DataDir (node-id), which the second must not touch.
    config = orchestratorConfig(nats.url, { NodeID: "" });
    first = await startOrchestrator(config, silentLogger);
    const files = readdirSync(config.DataDir).sort();
    const nodeId = readFileSync(join(config.DataDir, "node-id"), "utf8");
    const second = await startOrchestrator({ ...config, NodeID: "" }, silentLogger, { command: "shoal devstack" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(StartupError);
    expect((second as Error).message).toMatch(
      new RegExp(`^DataDir ${config.DataDir} is in use by shoal serve \\(pid ${process.pid} `),
    );
    expect(readdirSync(config.DataDir).sort()).toEqual(files);
    expect(readFileSync(join(config.DataDir, "node-id"), "utf8")).toBe(nodeId);
    const res = await fetch(`${first.apiUrl}/api/v1/orchestrator/nodes`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { Nodes: unknown[] }).Nodes).toHaveLength(1);
  });
});
