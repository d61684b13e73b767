import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { JobApiClient } from "../support/job-api-client.ts";
import { executionsOf, until } from "../support/job-waits.ts";
import { shellJob } from "../support/shell-job.ts";
import { RESULT_SWEEP_MS } from "../../src/compute/publisher/result-retention.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { runShoal, waitFor } from "../support/shoal-process.ts";

/**
 * Results on real components: a job writes into /outputs in a Docker container on a compute agent, the agent's local
 * publisher archives it, the orchestrator lists it at GET /jobs/{id}/results, and `shoal job get` downloads it through
 * the API (read from the node over NATS) and unpacks it as `bacalhau job get` lays it out.
 */
const KEY = "results-key-0123456789abcdefghijklm";
const USERS: AuthUser[] = [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] }];
const nodeId = `res-${randomUUID().slice(0, 8)}`;
const MAX_RESULT_BYTES = 64 * 1024;
/** The node's clock: its retention rule (a period of 1m, its least) runs only when the test moves it. */
const clock = new ManualClock(Date.now());
let image = "";
let cluster: DockerNodeOrchestrator | undefined;
const client = new JobApiClient(
  () => cluster!.orchestrator.apiUrl,
  () => KEY,
);

const publishing = (command: string) => {
  const job = shellJob(image, command);
  return {
    ...job,
    Tasks: [{ ...job.Tasks[0], Publisher: { Type: "local" }, ResultPaths: [{ Name: "outputs", Path: "/outputs" }] }],
  };
};

const jobGet = (jobId: string, dir: string) => {
  const url = new URL(cluster!.orchestrator.apiUrl);
  const api = ["--api-host", url.hostname, "--api-port", url.port, "--api-key", KEY];
  return runShoal(["job", "get", jobId, "--output-dir", dir, ...api]);
};

const ended = (jobId: string) =>
  until(client, jobId, (j) => ["Completed", "Failed"].includes(j.Job.State.StateType), "the job ends");

beforeAll(async () => {
  image = await dockerTestImage();
  cluster = await startDockerNodeOrchestrator("shoal-results-", USERS, [
    {
      id: nodeId,
      maxResultBytes: MAX_RESULT_BYTES,
      resultRetention: { periodMs: RESULT_SWEEP_MS, maxTotalBytes: 0 },
      clock,
    },
  ]);
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("a job's results", () => {
  it("what the job wrote to /outputs, with its stdout and exit code, downloaded by shoal job get", async () => {
    const jobId = await client.submit(
      publishing("mkdir -p /outputs/sub && echo one > /outputs/a.txt && echo two > /outputs/sub/b.txt && echo done"),
    );
    const job = await ended(jobId);
    expect(job.Job.State.StateType).toBe("Completed");
    const execution = executionsOf(job)[0]!;
    expect(execution.PublishedResult).toMatchObject({ Type: "local", Params: { Name: `${execution.ID}.tar.gz` } });

    const list = await client.call("GET", `/api/v1/orchestrator/jobs/${jobId}/results`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      Items: [
        {
          Type: "urlDownload",
          Params: expect.objectContaining({
            URL: expect.stringMatching(new RegExp(`/api/v1/orchestrator/jobs/${jobId}/results/${execution.ID}$`)),
            ExecutionID: execution.ID,
          }),
        },
      ],
      NextToken: "",
    });

    const dir = tempDir("shoal-job-get-");
    const got = await jobGet(jobId, dir);
    expect(got.code, got.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["exitCode", "outputs", "stderr", "stdout"]);
    expect(readFileSync(join(dir, "outputs", "a.txt"), "utf8")).toBe("one\n");
    expect(readFileSync(join(dir, "outputs", "sub", "b.txt"), "utf8")).toBe("two\n");
    expect(readFileSync(join(dir, "stdout"), "utf8")).toBe("done\n");
    expect(readFileSync(join(dir, "exitCode"), "utf8")).toBe("0");

    // A second download into the same directory would overwrite: refused, nothing changed.
    const again = await jobGet(jobId, dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/output already exists/);
    expect(readFileSync(join(dir, "outputs", "a.txt"), "utf8")).toBe("one\n");
  }, 120_000);

  it("more than the node publishes fails the execution, naming the limit", async () => {
    const jobId = await client.submit(publishing("head -c 100000 /dev/zero > /outputs/big"));
    const job = await ended(jobId);
    expect(job.Job.State.StateType).toBe("Failed");
    expect(JSON.stringify(job)).toMatch(
      /this node publishes at most 64KiB per execution \(Compute\.Publishers\.MaxResultBytes\)/,
    );
    expect((await client.call("GET", `/api/v1/orchestrator/jobs/${jobId}/results`)).body).toEqual({
      Items: [],
      NextToken: "",
    });
  }, 120_000);

  it("a result the node's retention rule removed is a 404 saying when and why, and shoal job get says so", async () => {
    const jobId = await client.submit(publishing("echo kept > /outputs/a.txt"));
    const job = await ended(jobId);
    expect(job.Job.State.StateType).toBe("Completed");
    const executionId = executionsOf(job)[0]!.ID;
    const path = `/api/v1/orchestrator/jobs/${jobId}/results/${executionId}`;
    expect((await client.call("GET", path)).status).toBe(200);

    // Each sweep arms the next once it ends: move the node's clock a sweep at a time until the result has gone.
    await waitFor(
      async () => {
        await clock.advance(RESULT_SWEEP_MS);
        return (await client.call("GET", path)).status === 404;
      },
      30_000,
      () => "the node to remove the result",
    );
    const gone = await client.call("GET", path);
    const message = new RegExp(
      `results of execution ${executionId} were removed from node ${nodeId} at \\S+, ` +
        "after 1m \\(Compute\\.Publishers\\.Local\\.RetentionPeriod\\)",
    );
    expect(JSON.stringify(gone.body)).toMatch(message);

    const got = await jobGet(jobId, tempDir("shoal-job-get-"));
    expect(got.code).toBe(1);
    expect(got.stderr).toMatch(message);
  }, 120_000);

  it("a job without a publisher has no results", async () => {
    const jobId = await client.submit(shellJob(image, "echo hi"));
    const job = await ended(jobId);
    expect(job.Job.State.StateType).toBe("Completed");
    expect(executionsOf(job)[0]!.PublishedResult).toBeUndefined();
    expect((await client.call("GET", `/api/v1/orchestrator/jobs/${jobId}/results`)).body).toEqual({
      Items: [],
      NextToken: "",
    });
    const dir = tempDir("shoal-job-get-");
    mkdirSync(dir, { recursive: true });
    const got = await jobGet(jobId, dir);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stderr).toMatch(/has no results to download/);
    expect(readdirSync(dir)).toEqual([]);
  }, 120_000);
});
