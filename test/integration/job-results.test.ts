import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
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
/** A second node, for a job of Count 2 (a batch job takes one execution per node). */
const otherNodeId = `res-${randomUUID().slice(0, 8)}`;
const MAX_RESULT_BYTES = 64 * 1024;
/** The nodes' clock: their retention rule (a period of 1m, its least) runs only when the test moves it. */
const clock = new ManualClock(Date.now());
let image = "";
let cluster: DockerNodeOrchestrator | undefined;
const client = new JobApiClient(
  () => cluster!.orchestrator.apiUrl,
  () => KEY,
);

const publishing = (command: string, count = 1) => {
  const job = shellJob(image, command);
  return {
    ...job,
    Count: count,
    Tasks: [{ ...job.Tasks[0], Publisher: { Type: "local" }, ResultPaths: [{ Name: "outputs", Path: "/outputs" }] }],
  };
};

const jobGet = (jobId: string, dir: string, ...flags: string[]) => {
  const url = new URL(cluster!.orchestrator.apiUrl);
  const api = ["--api-host", url.hostname, "--api-port", url.port, "--api-key", KEY];
  return runShoal(["job", "get", jobId, "--output-dir", dir, ...api, ...flags]);
};

/** What a refusal prints: one line (a usage error adds where to read the usage), never a stack trace. */
const refusal = (got: { code: number | null; stderr: string }, code: number, message: RegExp) => {
  expect(got.code, got.stderr).toBe(code);
  expect(got.stderr).toMatch(message);
  expect(got.stderr).not.toMatch(/\n\s+at /);
  expect(got.stderr.trim().split("\n")).toHaveLength(code === 2 ? 2 : 1);
};

const resultIds = async (jobId: string, query = "") =>
  ((await client.call("GET", `/api/v1/orchestrator/jobs/${jobId}/results${query}`)).body.Items as Body[]).map(
    (i) => i.Params.ExecutionID as string,
  );

const ended = (jobId: string) =>
  until(client, jobId, (j) => ["Completed", "Failed"].includes(j.Job.State.StateType), "the job ends");

beforeAll(async () => {
  image = await dockerTestImage();
  cluster = await startDockerNodeOrchestrator("shoal-results-", USERS, [
    ...[nodeId, otherNodeId].map((id) => ({
      id,
      maxResultBytes: MAX_RESULT_BYTES,
      resultRetention: { periodMs: RESULT_SWEEP_MS, maxTotalBytes: 0 },
      clock,
    })),
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
    refusal(await jobGet(jobId, dir), 1, /^Error: cannot merge results as output already exists: .*exitCode \(and 4/);
    expect(readFileSync(join(dir, "outputs", "a.txt"), "utf8")).toBe("one\n");
    expect(readdirSync(dir).sort()).toEqual(["exitCode", "outputs", "stderr", "stdout"]);

    // Ordinary refusals: one line each, nothing written.
    refusal(await jobGet(jobId, join(dir, "missing")), 2, /^Error: output dir does not exist: .*missing\n/);
    refusal(await jobGet(jobId, join(dir, "stdout")), 2, /^Error: --output-dir .*stdout is a file\n/);
    const small = tempDir("shoal-job-get-");
    refusal(await jobGet(jobId, small, "--max-size", "10B"), 1, /^Error: a result unpacks to more than 10 bytes/);
    expect(readdirSync(small)).toEqual([]);
  }, 120_000);

  it("of a job of Count 2: merged as Bacalhau merges them, or each archive on its own with --raw", async () => {
    const jobId = await client.submit(publishing("hostname > /outputs/$(hostname).txt && echo done", 2));
    const job = await ended(jobId);
    expect(job.Job.State.StateType).toBe("Completed");
    const ids = await resultIds(jobId);
    expect(ids).toHaveLength(2);

    const dir = tempDir("shoal-job-get-");
    const got = await jobGet(jobId, dir);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stderr).toMatch(/Downloaded 2 results/);
    expect(readFileSync(join(dir, "stdout"), "utf8")).toBe("done\ndone\n");
    expect(readFileSync(join(dir, "exitCode"), "utf8")).toBe("0\n0");
    const files = readdirSync(join(dir, "outputs"));
    expect(files).toHaveLength(2);
    for (const file of files) expect(readFileSync(join(dir, "outputs", file), "utf8")).toBe(`${file.slice(0, -4)}\n`);

    const raw = tempDir("shoal-job-get-");
    const gotRaw = await jobGet(jobId, raw, "--raw");
    expect(gotRaw.code, gotRaw.stderr).toBe(0);
    expect(readdirSync(raw)).toEqual(["raw"]);
    expect(readdirSync(join(raw, "raw")).sort()).toEqual(ids.map((id) => `${id}.tar.gz`).sort());
  }, 120_000);

  it("of a rerun job: the current version's by default, another with --version, all with --all-versions", async () => {
    const jobId = await client.submit(publishing("hostname > /outputs/host && echo run"));
    await ended(jobId);
    const rerun = await client.call("PUT", `/api/v1/orchestrator/jobs/${jobId}/rerun`, {});
    expect(rerun.status, JSON.stringify(rerun.body)).toBe(200);
    await until(
      client,
      jobId,
      (j) => j.Job.Version === 2 && ["Completed", "Failed"].includes(j.Job.State.StateType),
      "version 2 ends",
    );
    const [first] = await resultIds(jobId, "?job_version=1");
    const [second] = await resultIds(jobId);
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(await resultIds(jobId, "?all_job_versions=true")).toEqual([first, second]);

    const current = tempDir("shoal-job-get-");
    const got = await jobGet(jobId, current);
    expect(got.code, got.stderr).toBe(0);
    expect(readFileSync(join(current, "stdout"), "utf8")).toBe("run\n");
    expect(readFileSync(join(current, "exitCode"), "utf8")).toBe("0");
    const earlier = tempDir("shoal-job-get-");
    expect((await jobGet(jobId, earlier, "--version", "1")).code).toBe(0);
    // Each execution's container has its own host name.
    expect(readFileSync(join(earlier, "outputs", "host"), "utf8")).not.toBe(
      readFileSync(join(current, "outputs", "host"), "utf8"),
    );

    // Both versions wrote outputs/host: refused as a whole, pointing at --raw; nothing left behind.
    const both = tempDir("shoal-job-get-");
    writeFileSync(join(both, "mine"), "kept");
    refusal(await jobGet(jobId, both, "--all-versions"), 1, /outputs\/host is in more than one of them\. Use --raw/);
    expect(readdirSync(both)).toEqual(["mine"]);
    expect((await jobGet(jobId, both, "--all-versions", "--raw")).code).toBe(0);
    expect(readdirSync(join(both, "raw")).sort()).toEqual([`${first}.tar.gz`, `${second}.tar.gz`].sort());
  }, 180_000);

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
    const { ID: executionId, NodeID: ranOn } = executionsOf(job)[0]!;
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
      `results of execution ${executionId} were removed from node ${ranOn} at \\S+, ` +
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
