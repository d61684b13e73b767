import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { startComputeProcess, untilApproved } from "../support/compute-processes.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, inState, until } from "../support/job-waits.ts";
import { containersOf, removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { shellJob } from "../support/shell-job.ts";
import { waitFor, type ShoalProcess } from "../support/shoal-process.ts";

/**
 * Job types and retries end to end, as job-run.test.ts runs jobs: the orchestrator with its own
 * NATS, real `shoal compute` processes running executions in Docker, everything read back over
 * the REST API. Three nodes from the start: `a-broken-…`, whose Docker engine cannot be reached
 * (DOCKER_HOST points nowhere; it pulls images, so it bids without asking the engine, takes work and
 * every execution fails there), and two good ones;
 * a fourth good one joins during the daemon test. Node ids sort the broken node first, so that
 * among equal nodes it is the one a job tries first.
 */
const KEY = "types-key-0123456789abcdefghijklmno";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const suffix = randomUUID().slice(0, 8);
const broken = `a-broken-${suffix}`;
const good = [`b-good-${suffix}`, `c-good-${suffix}`];
const late = `d-late-${suffix}`;
let image = "";
let orchestrator: RunningOrchestrator;
const computes: ShoalProcess[] = [];

const jobs = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);

const job = (type: string, command: string, constraints: { Key: string; Operator: string; Values: string[] }[] = []) =>
  shellJob(image, command, { type, constraints });
const onGood = [{ Key: "role", Operator: "=", Values: ["good"] }];

const ended = inState("Completed", "Failed", "Stopped");
const RUNNING = 6;
const COMPLETED = 9;
const FAILED = 10;
const CANCELLED = 11;

/** A `shoal compute` process joined to this test's orchestrator: 1 CPU, 256 MiB, fast heartbeats. */
function startCompute(
  id: string,
  role: string,
  env: Record<string, string> = {},
  settings: string[] = [],
): ShoalProcess {
  const p = startComputeProcess({
    nodeId: id,
    dataDir: tempDir(`shoal-jt-${id}-`),
    orchestrators: orchestrator.natsUrl,
    token: orchestrator.joinToken.token,
    settings: ["Compute.Docker.StopGracePeriod=1s", `Labels=role=${role}`, ...settings],
    env,
  });
  computes.push(p);
  return p;
}

beforeAll(async () => {
  image = await dockerTestImage();
  const config = await ownNatsOrchestratorConfig("shoal-jt-orch-", { "API.Auth.Users": USERS });
  orchestrator = await startOrchestrator(config, silentLogger);
  // It pulls images, so its bid does not ask the engine for the image: it bids, and fails the run.
  startCompute(broken, "broken", { DOCKER_HOST: `unix://${tempDir("shoal-jt-nodocker-")}/docker.sock` }, [
    "Compute.Docker.AllowPull=true",
  ]);
  for (const id of good) startCompute(id, "good");
  for (const id of [broken, ...good]) await untilApproved(jobs, id);
}, 120_000);

afterAll(async () => {
  for (const p of computes) if (p.child.exitCode === null) await p.kill("SIGTERM");
  await orchestrator?.stop();
  await removeContainersOf(broken, ...good, late);
});

describe("retries of a batch job", () => {
  it("an execution that fails on one node is retried on another, where the job completes", async () => {
    const jobId = await jobs.submit(job("batch", "echo ran $BACALHAU_JOB_TYPE partition $BACALHAU_PARTITION_INDEX"));
    const got = await until(jobs, jobId, ended, "the job ended");
    expect(got.Job.State.StateType).toBe("Completed");
    const [first, retry] = executionsOf(got) as [Body, Body];
    expect(executionsOf(got)).toHaveLength(2);
    expect(first).toMatchObject({ NodeID: broken, ComputeState: { StateType: FAILED } });
    expect(good).toContain(retry.NodeID);
    expect(retry).toMatchObject({
      PreviousExecution: first.ID,
      ComputeState: { StateType: COMPLETED },
      RunOutput: { Stdout: "ran batch partition 0\n", ExitCode: 0 },
    });
    const requested = (got.History.Items as Body[])
      .filter((h) => h.Event.Message.startsWith("Requested execution"))
      .map((h) => h.Event.Message as string);
    expect(requested[0]).toBe(`Requested execution on ${broken}`);
    expect(requested[1]).toContain(
      `Requested execution on ${retry.NodeID} (retry of partition 0: execution ${first.ID} on node ${broken} failed: `,
    );
  }, 90_000);

  it("a job failing everywhere ends Failed after bounded retries (twice per node), naming the last failure and its exit code", async () => {
    const jobId = await jobs.submit(job("batch", "echo broken >&2; exit 3", onGood));
    const got = await until(jobs, jobId, ended, "the job ended");
    expect(got.Job.State.StateType).toBe("Failed");
    const executions = executionsOf(got);
    expect(executions).toHaveLength(4);
    for (const id of good) expect(executions.filter((e) => e.NodeID === id)).toHaveLength(2);
    expect(executions.every((e) => e.ComputeState.StateType === FAILED && e.RunOutput?.ExitCode === 3)).toBe(true);
    const message = got.Job.State.Message as string;
    expect(message).toMatch(/^not enough nodes to run job\. requested: 1, available: 3, suitable: 0\./);
    expect(message).toContain("• 2 of 3 nodes: job already executed on this node more than once");
    expect(message).toMatch(
      /Last failure: execution e-[0-9a-f-]+ on node [a-z0-9-]+ failed: the command exited with code 3$/,
    );
  }, 90_000);
});

describe("ops jobs", () => {
  it("run once on every matching node, and complete", async () => {
    const jobId = await jobs.submit(job("ops", "echo $BACALHAU_JOB_TYPE", onGood));
    const got = await until(jobs, jobId, ended, "the ops job ended");
    expect(got.Job.State.StateType).toBe("Completed");
    expect(
      executionsOf(got)
        .map((e) => [e.NodeID, e.ComputeState.StateType, e.RunOutput?.Stdout])
        .sort(),
    ).toEqual(good.map((id) => [id, COMPLETED, "ops\n"]));
  }, 60_000);

  it("fail once every execution ended if one failed (Bacalhau's message), and are not retried", async () => {
    const jobId = await jobs.submit(job("ops", "echo ok"));
    const got = await until(jobs, jobId, ended, "the ops job ended");
    expect(got.Job.State.StateType).toBe("Failed");
    expect(got.Job.State.Message).toMatch(
      new RegExp(
        `^Job failed because one or more executions failed: execution e-[0-9a-f-]+ on node ${broken} failed: `,
      ),
    );
    const states = Object.fromEntries(executionsOf(got).map((e) => [e.NodeID, e.ComputeState.StateType]));
    expect(states).toEqual({ [broken]: FAILED, [good[0] as string]: COMPLETED, [good[1] as string]: COMPLETED });
  }, 60_000);
});

describe("daemon jobs", () => {
  it("run on each matching node, and on one that joins later; never complete; stopped, every container goes", async () => {
    const jobId = await jobs.submit(job("daemon", "echo up; sleep 600", onGood));
    const running = (n: number) => (j: Body) =>
      executionsOf(j).filter((e) => e.ComputeState.StateType === RUNNING).length === n;
    const two = await until(jobs, jobId, running(2), "running on both good nodes");
    expect(
      executionsOf(two)
        .map((e) => e.NodeID)
        .sort(),
    ).toEqual(good);
    startCompute(late, "good");
    const three = await until(jobs, jobId, running(3), "running on the node that joined");
    expect(
      executionsOf(three)
        .map((e) => e.NodeID)
        .sort(),
    ).toEqual([...good, late]);
    expect(three.Job.State.StateType).toBe("Running");
    expect((await jobs.stop(jobId, "enough")).status).toBe(200);
    await until(
      jobs,
      jobId,
      (j) => executionsOf(j).every((e) => e.ComputeState.StateType === CANCELLED),
      "every execution cancelled",
      30_000,
    );
    for (const id of [...good, late])
      await waitFor(
        async () => (await containersOf(id)).length === 0,
        30_000,
        () => `containers on ${id} removed`,
      );
  }, 90_000);
});
