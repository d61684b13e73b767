import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import { startComputeProcess, untilApproved } from "../support/compute-processes.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { localOrchestratorFlags } from "../support/local-orchestrator-flags.ts";
import { firstExecutionIn, settled, untilExecutions } from "../support/job-waits.ts";
import { containersOf, removeContainersOf } from "../support/node-containers.ts";
import { freePort } from "../support/nats-server.ts";
import { shellJob } from "../support/shell-job.ts";
import { ShoalProcess } from "../support/shoal-process.ts";

/**
 * An orchestrator killed with SIGKILL mid-job loses nothing: real `shoal serve` and `shoal
 * compute` processes, a real Docker engine. After the restart on the same DataDir the job
 * completes with its output, its history has each transition once and in order, and the job ran
 * once: one execution, one container started (the engine's own events count them).
 */
const docker = new Docker();
const nodeId = `jd-${randomUUID().slice(0, 8)}`;
const dataDir = tempDir("shoal-jd-orch-");
let image = "";
let apiPort = 0;
let natsPort = 0;
let serve: ShoalProcess | undefined;
let compute: ShoalProcess | undefined;

const serveArgs = () => ["serve", ...localOrchestratorFlags({ dataDir, apiPort, natsPort }), "-c", "NodeID=node-0"];
async function startServe(): Promise<ShoalProcess> {
  serve = ShoalProcess.start(serveArgs());
  await serve.waitForOutput("orchestrator node-0 is running", 60_000);
  return serve;
}
const adminKey = () => readFileSync(join(dataDir, "credentials", "api-admin-key"), "utf8").trim();

const jobs = new JobApiClient(() => `http://127.0.0.1:${apiPort}`, adminKey);
/** Reads that an orchestrator being restarted may not answer yet. */
const whileRestarting = {
  job: (jobId: string) => jobs.job(jobId).catch((): Body => ({})),
  node: (nodeId: string) => jobs.node(nodeId).catch((): Body => ({})),
};
const batch = (command: string) => shellJob(image, command);

/**
 * How many containers of this test's node the engine started since `since` (Unix seconds): a counter no restart can
 * fool.
 */
async function containerStarts(executionId: string, since: number): Promise<number> {
  const stream = await docker.getEvents({
    since,
    until: Math.ceil(Date.now() / 1000),
    filters: {
      type: ["container"],
      event: ["start"],
      label: [`${NODE_LABEL}=${nodeId}`, `shoal.execution=${executionId}`],
    },
  });
  let text = "";
  for await (const chunk of stream as unknown as AsyncIterable<Buffer>) text += chunk.toString();
  return text.split("\n").filter((line) => line.trim() !== "").length;
}

/**
 * The job's history, whole: each entry once (SeqNum strictly increasing, no state entered twice),
 * the job Pending → Running → Completed with each entry's Previous the one before, its one
 * execution from New (1) through states that only go forward to Running (6) and Completed (9).
 * The states between New and Running are the dispatcher's (a bid asked for, accepted) and not
 * pinned here.
 */
function expectWholeHistory(history: Body[], executionId: string): void {
  const seq = history.map((h) => h.SeqNum as number);
  expect(seq).toEqual([...seq].sort((a, b) => a - b));
  expect(new Set(seq).size).toBe(seq.length);
  const job = history.filter((h) => h.Type === "JobLevel").map((h) => h.JobState as { Previous: string; New: string });
  expect(job.map((s) => s.New)).toEqual(["Pending", "Running", "Completed"]);
  for (let i = 1; i < job.length; i++) expect(job[i]!.Previous).toBe(job[i - 1]!.New);
  const executions = history.filter((h) => h.Type === "ExecutionLevel");
  expect(new Set(executions.map((h) => h.ExecutionID))).toEqual(new Set([executionId]));
  const states = executions.map((h) => h.ExecutionState.New as number);
  expect(states[0]).toBe(1);
  expect(states.slice(-2)).toEqual([6, 9]);
  for (let i = 1; i < states.length; i++)
    expect(states[i]!, `execution states ${states.join(",")}`).toBeGreaterThan(states[i - 1]!);
}

const containers = () => containersOf(nodeId);

beforeAll(async () => {
  image = await dockerTestImage();
  apiPort = await freePort();
  natsPort = await freePort();
  await startServe();
  startCompute();
  await untilApproved(whileRestarting, nodeId, compute);
}, 120_000);

const computeDataDir = tempDir(`shoal-jd-${nodeId}-`);
function startCompute(): void {
  compute = startComputeProcess({
    nodeId,
    dataDir: computeDataDir,
    orchestrators: `nats://127.0.0.1:${natsPort}`,
    token: readFileSync(join(dataDir, "credentials", "join-token"), "utf8").trim(),
  });
}

afterAll(async () => {
  if (compute && compute.child.exitCode === null && compute.child.signalCode === null) await compute.kill("SIGTERM");
  if (serve && serve.child.exitCode === null && serve.child.signalCode === null) await serve.kill("SIGTERM");
  await removeContainersOf(nodeId);
});

describe("an orchestrator killed with SIGKILL loses no job", () => {
  it("mid-job, its execution Running in Docker: after the restart the job completes once, its output and history whole", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const jobId = await jobs.submit(batch("sleep 3; echo survived"));
    const executionId = (await untilExecutions(jobs, jobId, firstExecutionIn(6), "execution Running"))[0]!.ID as string;
    expect((await containers()).filter((c) => c.State === "running").map((c) => c.Labels["shoal.execution"])).toEqual([
      executionId,
    ]);

    await serve!.kill("SIGKILL");
    await startServe();

    const got = await settled(whileRestarting, jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType, JSON.stringify(got.Job.State)).toBe("Completed");
    expect(got.Executions.Items.map((e: Body) => e.ID)).toEqual([executionId]);
    expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: "survived\n", ExitCode: 0 });
    expectWholeHistory(got.History.Items as Body[], executionId);
    expect(await containerStarts(executionId, since)).toBe(1);
  }, 150_000);

  it("right after the PUT is acknowledged: after the restart the job still runs, once", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const jobId = await jobs.submit(batch("echo placed-after-restart"));
    await serve!.kill("SIGKILL");
    const killedAt = Date.now();
    await startServe();

    const got = await settled(whileRestarting, jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType, JSON.stringify(got.Job.State)).toBe("Completed");
    expect(got.Executions.Items).toHaveLength(1);
    const executionId = got.Executions.Items[0].ID as string;
    // Placed by the restarted orchestrator (CreateTime in nanoseconds): the kill came before placement.
    expect(got.Executions.Items[0].CreateTime / 1e6).toBeGreaterThanOrEqual(killedAt);
    expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: "placed-after-restart\n", ExitCode: 0 });
    expectWholeHistory(got.History.Items as Body[], executionId);
    expect(await containerStarts(executionId, since)).toBe(1);
  }, 150_000);

  it("after placement, its execution not yet taken by the node (the node was away): the restarted orchestrator sends it again", async () => {
    // The node is gone but still HEALTHY (DisconnectTimeout 1m): the job is placed there and
    // RunExecution reaches nobody. Past the workflow's checkpoint save (1 s) the orchestrator is
    // killed, so its restart does not replay the ExecutionCreated step.
    await compute!.kill("SIGKILL");
    const since = Math.floor(Date.now() / 1000) - 1;
    const jobId = await jobs.submit(batch("echo sent-again"));
    await untilExecutions(jobs, jobId, firstExecutionIn(1), "execution New");
    // The workflow saves its checkpoint after a batch once 1 s has passed since the last save: a
    // later job (one no node matches, so it fails at once) moves it past the ExecutionCreated step.
    await new Promise((r) => setTimeout(r, 1_500));
    const later = await jobs.submit({
      ...batch("true"),
      Constraints: [{ Key: "zone", Operator: "=", Values: ["nowhere"] }],
    });
    await settled(whileRestarting, later, ["Failed"]);
    await new Promise((r) => setTimeout(r, 500));
    await serve!.kill("SIGKILL");
    startCompute();
    await startServe();

    const got = await settled(whileRestarting, jobId, ["Completed", "Failed"]);
    expect(got.Job.State.StateType, JSON.stringify(got.Job.State)).toBe("Completed");
    expect(got.Executions.Items).toHaveLength(1);
    const executionId = got.Executions.Items[0].ID as string;
    expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: "sent-again\n", ExitCode: 0 });
    expectWholeHistory(got.History.Items as Body[], executionId);
    expect(await containerStarts(executionId, since)).toBe(1);
  }, 150_000);
});
