import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Docker from "dockerode";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExecutionReportHandler } from "../../src/actors/execution-report-handler.ts";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { ORCHESTRATOR_PERMISSIONS, ORCHESTRATOR_USER } from "../../src/transport/nats-auth/nats-roles.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { newNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import { NatsOperator, loadOrCreateOperatorKeys } from "../../src/transport/nats-jwt/nats-operator.ts";
import { NodeWorkClient } from "../../src/transport/node-work-client.ts";
import type { WorkTask } from "../../src/transport/work-messages.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { RecordingExecutionReports } from "../support/recording-execution-reports.ts";
import { ShoalProcess, runShoal, waitFor } from "../support/shoal-process.ts";

/**
 * `shoal compute` as a user starts it, with its Compute.AllocatedCapacity and Compute.Docker keys,
 * taking work from an orchestrator over its own NATS, and killed with -9 mid-run.
 */
const docker = new Docker();
const nodeId = `cw-${randomUUID().slice(0, 8)}`;
let image = "";
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
let nc: NatsConnection;
let handler: ExecutionReportHandler;
const reports = new RecordingExecutionReports();
const processes: ShoalProcess[] = [];
const computeDir = tempDir("shoal-cw-");

const startCompute = () => {
  const p = ShoalProcess.start([
    "compute",
    "--node-id",
    nodeId,
    "-c",
    `DataDir=${computeDir}`,
    "-c",
    `Compute.Orchestrators=${orchestrator.natsUrl}`,
    "-c",
    `Compute.Auth.Token=${orchestrator.joinToken.token}`,
    "-c",
    "Compute.Heartbeat.Interval=500ms",
    "-c",
    "Compute.Heartbeat.ResourceUpdateInterval=500ms",
    "-c",
    "Compute.AllocatedCapacity.CPU=1",
    "-c",
    "Compute.AllocatedCapacity.Memory=256Mi",
    "-c",
    "Compute.Docker.StopGracePeriod=1s",
  ]);
  processes.push(p);
  return p;
};
const task = (command: string, cpuMillis = 500): WorkTask => ({
  Engine: { Type: "docker", Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] },
  Resources: { CPUMillis: cpuMillis, MemoryBytes: 32 * 1024 * 1024 },
  Network: "None",
  ExecutionTimeout: 0,
});
const containers = () => docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } });

beforeAll(async () => {
  image = await dockerTestImage();
  config = {
    ...defaultConfig(),
    DataDir: tempDir("shoal-cw-orch-"),
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    "API.Port": 0,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    "Orchestrator.NATS.TLS.Disable": true, // TLS is not under test here (test/e2e/nats-tls.test.ts)
  };
  // The reports go to this test's recording port, not to the orchestrator's execution actors.
  orchestrator = await startOrchestrator(config, silentLogger, { takeExecutionReports: false });
  const operator = new NatsOperator(loadOrCreateOperatorKeys(join(config.DataDir, "credentials")), {
    joinToken: orchestrator.joinToken.token,
    jetStreamDiskBytes: 1,
  });
  const key = newNkey("user");
  nc = await connect({
    servers: orchestrator.natsUrl,
    authenticator: jwtLogin(operator.issueUser(key.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS), key),
  });
  handler = new ExecutionReportHandler(nc, reports, { enforcesNodeKeys: true, logger: silentLogger });
  handler.start();
}, 120_000);

afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null) await p.kill("SIGTERM");
  await handler?.stop();
  await nc?.close();
  await orchestrator?.stop();
  for (const c of await containers()) await docker.getContainer(c.Id).remove({ force: true });
});

describe("shoal compute takes work", () => {
  it("offers its allocated capacity, refuses more, runs a job, and after kill -9 mid-run adopts its container and reports the end", async () => {
    startCompute();
    await waitFor(
      () => orchestrator.manager.live(nodeId)?.resources?.AvailableCapacity.CPU === 1,
      30_000,
      () => "capacity 1 CPU reported",
    );
    expect(orchestrator.manager.live(nodeId)?.resources?.AvailableCapacity.Memory).toBe(256 * 1024 * 1024);
    const work = new NodeWorkClient(nc);

    const big = { executionId: `e-${randomUUID()}`, jobId: `j-${randomUUID()}` };
    work.runExecution({ nodeId, ...big, task: task("true", 2000) });
    expect((await reports.next(big.executionId, "BidRejected")).Reason).toContain("can never fit");

    const ids = { executionId: `e-${randomUUID()}`, jobId: `j-${randomUUID()}` };
    work.runExecution({ nodeId, ...ids, task: task("sleep 4; echo survived") });
    await reports.next(ids.executionId, "ExecutionStarted");
    await processes[0]!.kill("SIGKILL");
    expect((await containers()).map((c) => c.State)).toEqual(["running"]);

    startCompute();
    const done = await reports.next(ids.executionId, "ExecutionCompleted", 60_000);
    expect(done.RunOutput).toMatchObject({ ExitCode: 0, STDOUT: "survived\n" });
    await waitFor(
      async () => (await containers()).length === 0,
      15_000,
      () => "container removed",
    );
  }, 120_000);

  it("refuses a bad Compute.AllocatedCapacity, Docker key or metrics token file naming the key, exit 1", async () => {
    const run = (...keys: string[]) =>
      runShoal(["compute", "--node-id", "bad-config", "-c", `DataDir=${tempDir()}`, ...keys.flatMap((k) => ["-c", k])]);
    const cpu = await run("Compute.AllocatedCapacity.CPU=lots");
    expect(cpu.code).toBe(1);
    expect(cpu.stderr).toContain('Config error: Compute.AllocatedCapacity.CPU: invalid value "lots"');
    const network = await run("Compute.Docker.AllowedNetworks=Host,Bridge");
    expect(network.code).toBe(1);
    expect(network.stderr).toContain(
      "Config error: Compute.Docker.AllowedNetworks: unknown network(s) Bridge (allowed: Host, Full)",
    );
    const pids = await run("Compute.Docker.PidsLimit=0");
    expect(pids.code).toBe(1);
    expect(pids.stderr).toContain("Config error: Compute.Docker.PidsLimit: must be at least 1, got 0");
    const caps = await run("Compute.Docker.Capabilities=chown,SYS_ADMIN");
    expect(caps.code).toBe(1);
    expect(caps.stderr).toContain(
      "Config error: Compute.Docker.Capabilities: capabilities SYS_ADMIN are not in Docker's default set",
    );
    // A node that would serve its metrics: refused at start, not left open for want of its token.
    const missing = join(tempDir(), "metrics-token");
    const port = await freePort();
    const token = await run(`Compute.Metrics.Port=${port}`, `Compute.Metrics.BearerTokenFile=${missing}`);
    expect(token.code).toBe(1);
    expect(token.stderr).toContain(
      `Config error: Compute.Metrics.BearerTokenFile: cannot read ${missing}: ENOENT: no such file or directory`,
    );
  });
});
