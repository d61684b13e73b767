import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DEFAULT_CONFINEMENT } from "../../src/compute/executor/container-confinement.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { EXECUTION_LABEL } from "../../src/compute/executor/docker-labels.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { settled, untilExecutions } from "../support/job-waits.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { shellJob } from "../support/shell-job.ts";
import { startJoined } from "../support/start-joined.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * A node's container limits seen from the orchestrator: a compute agent running jobs through the
 * DockerExecutor (pids limit 64) on the real engine reports the limits with each start, and the
 * API serves them as the execution's ComputeState.Details; a fork bomb ends and the node takes
 * its next job.
 */
const KEY = "confinement-key-0123456789abcdefghi";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const MIB = 1024 * 1024;
const RUNNING = 6;
const CANCELLED = 11;
const docker = new Docker();
const nodeId = `confined-${randomUUID().slice(0, 8)}`;
const suite = `confined-${randomUUID().slice(0, 6)}`;
let image = "";
let orchestrator: RunningOrchestrator;
let agent: ComputeAgent;

const api = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);
const job = (command: string) =>
  shellJob(image, command, {
    constraints: [{ Key: "suite", Operator: "=", Values: [suite] }],
    timeouts: { ExecutionTimeout: 60 },
  });

beforeAll(async () => {
  image = await dockerTestImage();
  const config = await ownNatsOrchestratorConfig("shoal-confined-", { "API.Auth.Users": USERS });
  orchestrator = await startOrchestrator(config, silentLogger);
  const executor = new DockerExecutor({
    nodeId,
    capacity: { cpuMillis: 1000, memoryBytes: 256 * MIB },
    logger: silentLogger,
    docker,
    stopGraceSeconds: 0,
    confinement: { ...DEFAULT_CONFINEMENT, pidsLimit: 64 },
  });
  const token = orchestrator.joinToken.token;
  agent = testAgent({
    nodeId,
    orchestrators: [orchestrator.natsUrl],
    token,
    labels: { suite },
    executor,
    resourceUpdateMs: 200,
  });
  await startJoined(agent, orchestrator.manager, nodeId);
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await orchestrator?.stop();
  await removeContainersOf(nodeId);
});

describe("the limits a node runs an execution under, over the API", () => {
  it("are the execution's ComputeState.Details from its start on, as the container was created", async () => {
    const jobId = await api.submit(job("sleep 20"));
    const isRunning = (e: Body[]) => e[0]?.ComputeState?.StateType === RUNNING;
    const [running] = await untilExecutions(api, jobId, isRunning, "its execution running");
    const execution = running as Body;
    const containers = await docker.listContainers({ filters: { label: [`${EXECUTION_LABEL}=${execution.ID}`] } });
    const host = (await docker.getContainer(containers[0]!.Id).inspect()).HostConfig;
    expect(host).toMatchObject({
      PidsLimit: 64,
      SecurityOpt: ["no-new-privileges"],
      CapDrop: ["ALL"],
      Privileged: false,
      ReadonlyRootfs: false,
    });
    expect(execution.ComputeState.Details).toEqual({
      "HostConfig.PidsLimit": "64",
      "HostConfig.SecurityOpt": "no-new-privileges",
      "HostConfig.CapDrop": "ALL",
      "HostConfig.CapAdd": (host.CapAdd ?? []).join(","),
      "HostConfig.Privileged": "false",
      "HostConfig.ReadonlyRootfs": "false",
      "HostConfig.NetworkMode": "none",
      "HostConfig.IpcMode": "private",
      "HostConfig.Memory": String(host.Memory),
      "HostConfig.MemorySwap": String(host.MemorySwap),
      "HostConfig.NanoCpus": String(host.NanoCpus),
    });
    const capAdd = "CHOWN,DAC_OVERRIDE,FOWNER,FSETID,KILL,NET_BIND_SERVICE,SETGID,SETUID";
    expect(execution.ComputeState.Details["HostConfig.CapAdd"]).toBe(capAdd);

    // Still there once it has ended (stopped here), and in the job's own view.
    expect((await api.stop(jobId, "seen enough")).status).toBe(200);
    const isCancelled = (e: Body[]) => e[0]?.ComputeState?.StateType === CANCELLED;
    const [ended] = await untilExecutions(api, jobId, isCancelled, "its execution cancelled");
    expect((ended as Body).ComputeState.Details).toEqual(execution.ComputeState.Details);
    const view = await api.job(jobId);
    expect((view.Executions.Items as Body[])[0]!.ComputeState.Details).toEqual(execution.ComputeState.Details);
  }, 90_000);

  it("a fork bomb ends at the pids limit with its output, and the node runs the next job", async () => {
    const bomb = [
      "P=/sys/fs/cgroup/pids; [ -e $P/pids.max ] || P=/sys/fs/cgroup",
      // At most 300 short sleepers: bounded even where no limit holds it.
      '( i=0; while [ $i -lt 300 ]; do sleep 3 & i=$((i+1)); done; echo "forked $i" ); echo "bomb ended"',
      'read current < $P/pids.current; echo "current $current"',
    ].join("\n");
    const jobId = await api.submit(job(bomb));
    const done = await settled(api, jobId, ["Completed", "Failed"]);
    const execution = (done.Executions.Items as Body[])[0]!;
    expect(execution.RunOutput.Stdout).toMatch(/^bomb ended\ncurrent \d+\n$/);
    expect(Number(/current (\d+)/.exec(execution.RunOutput.Stdout)?.[1])).toBeLessThanOrEqual(64);
    expect(execution.RunOutput.stderr).toContain("can't fork");
    expect(execution.ComputeState.Details["HostConfig.PidsLimit"]).toBe("64");

    const next = await api.submit(job("echo after the bomb"));
    const after = await settled(api, next, ["Completed", "Failed"]);
    expect(after.Job.State.StateType).toBe("Completed");
    const ran = (after.Executions.Items as Body[])[0]!;
    expect(ran).toMatchObject({ NodeID: nodeId, RunOutput: { Stdout: "after the bomb\n" } });
  }, 90_000);
});
