import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dieWithParent } from "../../src/transport/die-with-parent.ts";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { killLater, processRunning } from "../support/processes.ts";
import { waitFor } from "../support/shoal-process.ts";

const CHILD = join(import.meta.dirname, "../support/embedded-nats-child.ts");
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Starts a process that runs an EmbeddedNatsServer; resolves with both pids once the server is ready. */
async function serverInChild(alwaysWatchdog: boolean): Promise<{ parent: number; server: number }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CHILD, tempDir(), String(await freePort()), alwaysWatchdog ? "yes" : "no"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  cleanups.push(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"));
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  await waitFor(
    () => /nats-server pid \d+/.test(out),
    30_000,
    () => `the child's nats-server: ${out}`,
  );
  const server = Number(/nats-server pid (\d+)/.exec(out)![1]);
  cleanups.push(killLater(server));
  return { parent: child.pid!, server };
}

describe("the embedded nats-server dies with the process that started it", () => {
  it.skipIf(!dieWithParent("/bin/true", []).wrapped)(
    "through setpriv's parent-death signal",
    async () => {
      const { parent, server } = await serverInChild(false);
      expect(processRunning(server)).toBe(true);
      process.kill(parent, "SIGKILL");
      await waitFor(
        () => !processRunning(server),
        10_000,
        () => `nats-server ${server} gone`,
      );
    },
    60_000,
  );

  it("through a watchdog where setpriv is missing", async () => {
    const { parent, server } = await serverInChild(true);
    expect(processRunning(server)).toBe(true);
    process.kill(parent, "SIGKILL");
    await waitFor(
      () => !processRunning(server),
      10_000,
      () => `nats-server ${server} gone`,
    );
  }, 60_000);

  it("with a watchdog, still restarts a crashed server and stops it in order", async () => {
    const server = await EmbeddedNatsServer.start({
      host: "127.0.0.1",
      port: await freePort(),
      dir: tempDir(),
      logger: silentLogger,
      alwaysWatchdog: true,
      restartBackoff: { initialMs: 50, maxMs: 200, stableAfterMs: 10_000 },
    });
    cleanups.push(() => server.stop());
    const first = server.pid!;
    process.kill(first, "SIGKILL");
    await waitFor(
      () => server.state.running && server.pid !== first,
      15_000,
      () => "restarted",
    );
    const second = server.pid!;
    await server.stop();
    expect(processRunning(second)).toBe(false);
  }, 60_000);
});
