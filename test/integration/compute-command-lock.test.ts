import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { computeCommand } from "../../src/cli/commands/compute-command.ts";
import { lockDataDir } from "../../src/fs/data-dir-lock.ts";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

it("shoal compute releases its DataDir lock when the orchestrator refuses it", async () => {
  const nats = await TestNatsServer.start();
  cleanups.push(() => nats.stop());
  const orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, { "Orchestrator.Auth.Token": "the-right-token" }),
    silentLogger,
  );
  cleanups.push(() => orchestrator.stop());
  // The command waits for SIGINT/SIGTERM; what it leaves registered must not outlive the test.
  const signalListeners = [...process.listeners("SIGINT"), ...process.listeners("SIGTERM")];
  cleanups.push(() => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      for (const l of process.listeners(signal)) if (!signalListeners.includes(l)) process.off(signal, l);
    }
  });

  const dataDir = tempDir();
  const args = [
    "--node-id",
    "edge-1",
    "-c",
    `DataDir=${dataDir}`,
    "-c",
    `Compute.Orchestrators=${nats.url}`,
    "-c",
    "Compute.Auth.Token=a-wrong-token",
    "-c",
    "Logging.Level=error",
  ];
  await expect(computeCommand(args)).rejects.toThrow(/refused node edge-1/);
  // Free again: a second agent (or this one, retried) may take the DataDir.
  const lock = lockDataDir(join(dataDir, "compute"), "test");
  lock.release();
}, 60_000);
