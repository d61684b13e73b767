import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaPath } from "../../src/security/tls/api-ca-path.ts";
import { startComputeProcess } from "../support/compute-processes.ts";
import { tempDir } from "../support/fixtures.ts";
import { LocalServe } from "../support/local-serve.ts";
import { runShoal, type ShoalProcess } from "../support/shoal-process.ts";

/**
 * `shoal serve` with its NATS on TLS, as by default, and `shoal compute` processes as users start them: on the
 * orchestrator's machine (its DataDir), elsewhere with Compute.TLS.CACert, and elsewhere without.
 */
const serve = new LocalServe(tempDir("shoal-nats-tls-e2e-"), ["Orchestrator.NATS.TLS.Disable=false"]);
const computes: ShoalProcess[] = [];

beforeAll(async () => {
  await serve.start();
}, 90_000);
afterAll(async () => {
  for (const p of computes) if (p.child.exitCode === null) await p.kill("SIGTERM");
  await serve.stop();
});

const compute = (nodeId: string, dataDir: string, settings: string[] = []) => {
  const p = startComputeProcess({
    nodeId,
    dataDir,
    orchestrators: serve.natsUrl,
    token: readFileSync(serve.joinTokenFile, "utf8").trim(),
    settings,
  });
  computes.push(p);
  return p;
};

describe("shoal compute against serve's NATS over TLS", () => {
  it("joins from the orchestrator's DataDir, trusting the CA serve generated there", async () => {
    expect(serve.process?.stdout).toContain(`nodes run with this DataDir trust ${apiCaPath(serve.dataDir)}`);
    await compute("tls-local", serve.dataDir).waitForOutput("Compute node tls-local is running", 60_000);
  }, 90_000);

  it("joins from elsewhere with Compute.TLS.CACert", async () => {
    await compute("tls-given", tempDir("shoal-nats-tls-node-"), [
      `Compute.TLS.CACert=${apiCaPath(serve.dataDir)}`,
    ]).waitForOutput("Compute node tls-given is running", 60_000);
  }, 90_000);

  it("stops from elsewhere without it, naming the key to set", async () => {
    const p = compute("tls-none", tempDir("shoal-nats-tls-node-"));
    expect(await p.exited).not.toBe(0);
    expect(p.stderr).toContain("presents a certificate this client does not trust");
    expect(p.stderr).toContain("set Compute.TLS.CACert to the CA that signed it");
  }, 90_000);

  it("shoal sim's virtual nodes join as compute nodes do: with Compute.TLS.CACert, and not without", async () => {
    const sim = (settings: string[]) =>
      runShoal([
        "sim",
        ...["--nodes", "2", "--duration", "3s", "--orchestrator", serve.natsUrl, "--token-file", serve.joinTokenFile],
        ...["-c", `DataDir=${tempDir("shoal-nats-tls-sim-")}`, ...settings.flatMap((s) => ["-c", s])],
      ]);
    const trusting = await sim([`Compute.TLS.CACert=${apiCaPath(serve.dataDir)}`]);
    expect(trusting).toMatchObject({ code: 0, stdout: expect.stringContaining("Stopped: 2 registered") });
    const untrusting = await sim([]);
    expect(untrusting.code).toBe(1);
    expect(untrusting.stdout).toContain("2 gave up");
    expect(untrusting.stdout + untrusting.stderr).toContain("set Compute.TLS.CACert to the CA that signed it");
  }, 90_000);
});
