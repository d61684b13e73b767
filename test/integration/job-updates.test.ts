import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, until } from "../support/job-waits.ts";
import { ndjson } from "../support/ndjson-items.ts";
import { shellJob } from "../support/shell-job.ts";

/**
 * Job updates as Bacalhau >= 1.8 has them, on real components: alice submits a named batch job over REST, a compute
 * agent runs it in Docker; submitting the name again updates it to its next version (an unchanged spec refused unless
 * forced), the diff says what would change, a rerun runs it again, and the read routes pick a version.
 */
const ALICE_KEY = "alice-key-0123456789abcdefghijklm";
const USERS: AuthUser[] = [
  { Alias: "alice", APIKey: ALICE_KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] },
];
const JOBS = "/api/v1/orchestrator/jobs";
/** Bacalhau's ComputeState numbers. */
const RUNNING = 6;
const CANCELLED = 11;
const nodeId = `ju-${randomUUID().slice(0, 8)}`;
let jobImage = "";
let orchestrator: RunningOrchestrator;
let cluster: DockerNodeOrchestrator | undefined;

const alice = new JobApiClient(
  () => orchestrator.apiUrl,
  () => ALICE_KEY,
);
const named = (command: string) => ({ ...shellJob(jobImage, command), Name: "nightly-report" });
const completedAt = (jobId: string, version: number) =>
  until(
    alice,
    jobId,
    (j) => j.Job.Version === version && j.Job.State.StateType === "Completed",
    `version ${version} completes`,
  );
const get = async (path: string): Promise<Body> => {
  const res = await alice.call("GET", path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

beforeAll(async () => {
  jobImage = await dockerTestImage();
  cluster = await startDockerNodeOrchestrator("shoal-job-updates-", USERS, nodeId);
  orchestrator = cluster.orchestrator;
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("a named job submitted again", () => {
  it("is updated to its next version and runs it; the versions, executions and history are read by version", async () => {
    const jobId = await alice.submit(named("echo one"));
    await completedAt(jobId, 1);

    const unchanged = await alice.call("PUT", JOBS, { Job: named("echo one") });
    expect(unchanged.status).toBe(400);
    expect(unchanged.body).toMatchObject({
      Message: `no changes detected for new job spec. Job Name: 'nightly-report', Job Id: '${jobId}'`,
      Hint: "Use the --force flag to override this warning",
    });

    const diff = await alice.call("PUT", `${JOBS}/diff`, { Job: named("echo two") });
    expect(diff.status, JSON.stringify(diff.body)).toBe(200);
    expect(diff.body).toEqual({
      Diff: '- Tasks[0].Engine.Params.Parameters[0]: "echo one"\n+ Tasks[0].Engine.Params.Parameters[0]: "echo two"',
      Warnings: [],
    });
    expect((await alice.call("PUT", `${JOBS}/diff`, { Job: named("echo one") })).body.Diff).toBe("");

    expect((await alice.put(named("echo two"))).JobID).toBe(jobId);
    const second = await completedAt(jobId, 2);
    expect(second.Executions.Items.map((e: Body) => e.JobVersion)).toEqual([2]);
    expect(second.Executions.Items[0].RunOutput.Stdout).toBe("two\n");

    const versions = await get(`${JOBS}/${jobId}/versions`);
    expect(versions.Items.map((j: Body) => [j.Version, j.State.StateType])).toEqual([
      [1, "Completed"],
      [2, "Completed"],
    ]);
    const first = await get(`${JOBS}/${jobId}?job_version=1&include=executions`);
    expect(first.Job.Tasks[0].Engine.Params.Parameters).toEqual(["echo one"]);
    expect(first.Executions.Items.map((e: Body) => e.JobVersion)).toEqual([1]);
    const all = await get(`${JOBS}/${jobId}/executions?all_job_versions=true`);
    expect(all.Items.map((e: Body) => e.JobVersion).sort()).toEqual([1, 2]);
    expect((await alice.call("GET", `${JOBS}/${jobId}?job_version=3`)).status).toBe(404);

    // The history of the current version by default, every version's when asked; who updated it is on the entry.
    const current = await get(`${JOBS}/${jobId}/history?event_type=job`);
    expect(current.Items.every((h: Body) => h.JobVersion === 2)).toBe(true);
    expect(current.Items[0].Event).toMatchObject({
      Topic: "Submission",
      Message: "Job updated",
      Details: { Actor: "operator:alice" },
    });
    expect(current.Items[0].JobState).toEqual({ Previous: "Completed", New: "Pending" });
    const every = await get(`${JOBS}/${jobId}/history?event_type=job&all_job_versions=true`);
    expect(every.Items.filter((h: Body) => h.Event.Topic === "Submission").map((h: Body) => h.Event.Message)).toEqual([
      "Job submitted",
      "Job updated",
    ]);
  }, 120_000);

  it("is rerun as its next version, from its current or an earlier version, or forced through unchanged", async () => {
    const jobId = await alice.submit({ ...named("echo first"), Name: "rerun-me" });
    await completedAt(jobId, 1);
    await alice.put({ ...named("echo second"), Name: "rerun-me" });
    await completedAt(jobId, 2);

    const rerun = await alice.call("PUT", `${JOBS}/${jobId}/rerun`, { JobVersion: 1, Reason: "compare" });
    expect(rerun.status, JSON.stringify(rerun.body)).toBe(200);
    expect(rerun.body).toEqual({ JobID: jobId, JobVersion: 3, EvaluationID: "", Warnings: [] });
    const third = await completedAt(jobId, 3);
    expect(third.Job.Tasks[0].Engine.Params.Parameters).toEqual(["echo first"]);
    expect(third.Executions.Items[0].RunOutput.Stdout).toBe("first\n");
    const history = await get(`${JOBS}/${jobId}/history?event_type=job`);
    expect(history.Items[0].Event).toMatchObject({ Message: "Job rerun requested", Details: { Reason: "compare" } });

    const missing = await alice.call("PUT", `${JOBS}/rerun-me/rerun`, { JobVersion: 9 });
    expect(missing.status).toBe(404);
    expect(missing.body.Message).toBe(`job version 9 not found for job ${jobId}`);

    const forced = await alice.call("PUT", JOBS, { Job: { ...named("echo first"), Name: "rerun-me" }, Force: true });
    expect(forced.status, JSON.stringify(forced.body)).toBe(200);
    await completedAt(jobId, 4);
  }, 120_000);

  it("gives the logs of the version asked for, and of the latest execution of any version by default", async () => {
    const jobId = await alice.submit({ ...named("echo one"), Name: "logged" });
    await completedAt(jobId, 1);
    await alice.put({ ...named("echo two"), Name: "logged" });
    await completedAt(jobId, 2);
    const logs = async (query: string) => {
      const res = await alice.call("GET", `${JOBS}/${jobId}/logs?${query}`);
      expect(res.status, res.text).toBe(200);
      return ndjson(res.text).map((m) => m.value.Line as string);
    };
    expect(await logs("")).toEqual(["two\n"]);
    expect(await logs("job_version=1")).toEqual(["one\n"]);
    expect(await logs("job_version=2")).toEqual(["two\n"]);
    expect(await logs("all_job_versions=true")).toEqual(["two\n"]);
    const [firstExecution] = (await get(`${JOBS}/${jobId}/executions?job_version=1`)).Items as Body[];
    expect(await logs(`execution_id=${firstExecution!.ID}`)).toEqual(["one\n"]);
    expect(await logs(`execution_id=${firstExecution!.ID}&job_version=1`)).toEqual(["one\n"]);

    const elsewhere = await alice.call("GET", `${JOBS}/${jobId}/logs?execution_id=${firstExecution!.ID}&job_version=2`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.Message).toBe(`unable to find execution ${firstExecution!.ID} in job ${jobId} version 2`);
    const missing = await alice.call("GET", `${JOBS}/${jobId}/logs?job_version=3`);
    expect(missing.status).toBe(404);
    expect(missing.body.Message).toBe(`job version 3 not found for job ${jobId}`);
    expect((await alice.call("GET", `${JOBS}/${jobId}/logs?job_version=one`)).status).toBe(400);

    // A version no node can take has no execution: its logs are a 409, the job's are still the latest output.
    const nowhere = [{ Key: "nowhere", Operator: "=", Values: ["at-all"] }];
    await alice.put({ ...named("echo three"), Name: "logged", Constraints: nowhere });
    await until(alice, jobId, (j) => j.Job.Version === 3, "version 3 is stored");
    expect(await logs("")).toEqual(["two\n"]);
    expect((await alice.call("GET", `${JOBS}/${jobId}/logs?job_version=3`)).status).toBe(409);
  }, 120_000);

  it("takes an IdempotencyToken as one submission: a retry answers its version, another spec under it is a 409", async () => {
    const spec = (command: string) => ({ ...named(command), Name: "tokened" });
    const submit = (token: string, command: string) =>
      alice.call("PUT", JOBS, { Job: spec(command), IdempotencyToken: token });
    const first = await submit("t1", "echo a");
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const jobId = first.body.JobID as string;
    await completedAt(jobId, 1);
    expect((await submit("t2", "echo b")).body.JobID).toBe(jobId);
    await completedAt(jobId, 2);

    const retry = await submit("t1", "echo a");
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.JobID).toBe(jobId);
    const reused = await submit("t1", "echo c");
    expect(reused.status).toBe(409);
    expect(reused.body.Message).toBe(`IdempotencyToken "t1" was used for another job (${jobId})`);
    const unchanged = await submit("t3", "echo b");
    expect(unchanged.status).toBe(400);
    expect(unchanged.body.Hint).toBe("Use the --force flag to override this warning");
    const versions = await get(`${JOBS}/${jobId}/versions`);
    expect(versions.Items.map((j: Body) => j.Version)).toEqual([1, 2]);
  }, 120_000);

  it.each(["batch", "daemon"])(
    "runs its next version on the only node that fits once the earlier version's container stopped (%s)",
    async (type) => {
      // The node's whole CPU: the new version fits only in the room its earlier version's container still holds while
      // it stops.
      const whole = (command: string) => ({
        ...shellJob(jobImage, command, { type, resources: { CPU: "1", Memory: "32Mb" } }),
        Name: `hog-${type}`,
      });
      const jobId = await alice.submit(whole("sleep 60"));
      await until(alice, jobId, (j) => j.Job.State.StateType === "Running", "version 1 runs");

      expect((await alice.put(whole("sleep 61"))).JobID).toBe(jobId);
      const second = await until(
        alice,
        jobId,
        (j) =>
          j.Job.State.StateType === "Failed" ||
          (j.Job.Version === 2 && executionsOf(j).some((e) => e.ComputeState.StateType === RUNNING)),
        "version 2 runs or the job fails",
      );
      expect(second.Job.State.StateType, JSON.stringify(second.Job.State)).toBe("Running");
      const all = await get(`${JOBS}/${jobId}/executions?all_job_versions=true`);
      expect(all.Items.map((e: Body) => [e.JobVersion, e.ComputeState.StateType]).sort()).toEqual([
        [1, CANCELLED],
        [2, RUNNING],
      ]);
      const stopped = await alice.call("DELETE", `${JOBS}/${jobId}`);
      expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
      await until(alice, jobId, (j) => executionsOf(j).every((e) => e.ComputeState.StateType === CANCELLED), "stopped");
    },
    120_000,
  );
});
