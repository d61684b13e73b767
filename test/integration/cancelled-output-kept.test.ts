import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { JobApiClient } from "../support/job-api-client.ts";
import { firstExecutionIn, untilExecutions } from "../support/job-waits.ts";
import { ndjson } from "../support/ndjson-items.ts";
import { waitFor } from "../support/shoal-process.ts";
import { shellJob } from "../support/shell-job.ts";

/**
 * An execution the orchestrator cancels keeps what it printed: the node stops its container once told and reports the
 * end with its output after the cancel is stored; that output is kept on the execution (ExecutionOutputKept), so its
 * logs and its JSON show it. Real nats-server, SQLite and Docker.
 */
const KEY = "alice-key-kept-output-0123456789abc";
const USERS: AuthUser[] = [{ Alias: "alice", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] }];
const JOBS = "/api/v1/orchestrator/jobs";
/** Bacalhau's ComputeState numbers. */
const RUNNING = 6;
const CANCELLED = 11;
const nodeId = `kept-${randomUUID().slice(0, 8)}`;
let image = "";
let cluster: DockerNodeOrchestrator | undefined;

const alice = new JobApiClient(
  () => cluster?.orchestrator.apiUrl ?? "",
  () => KEY,
);

/** The job's output as the logs route serves it (NDJSON, without follow): its lines. */
async function logLines(jobId: string, query = ""): Promise<string[]> {
  const res = await alice.call("GET", `${JOBS}/${jobId}/logs?${query}`);
  expect(res.status, res.text).toBe(200);
  return ndjson(res.text).map((m) => m.value?.Line as string);
}

beforeAll(async () => {
  image = await dockerTestImage();
  cluster = await startDockerNodeOrchestrator("shoal-kept-output-", USERS, nodeId);
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("an execution stopped by the orchestrator", () => {
  it("keeps what it printed: `job stop`, then its logs and its RunOutput are still there", async () => {
    // A service prints and then runs until stopped (a TERM ends it at its next second).
    const command = "trap 'exit 0' TERM; echo serving; echo warming >&2; while true; do sleep 1; done";
    const jobId = await alice.submit(shellJob(image, command, { type: "service" }));
    await untilExecutions(alice, jobId, firstExecutionIn(RUNNING), "its execution running");
    // Read from the node while it runs: it has printed.
    await waitFor(
      async () => (await logLines(jobId)).includes("serving\n"),
      20_000,
      () => "the running execution's output",
    );

    const stopped = await alice.stop(jobId, "done with it");
    expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
    const [cancelled] = await untilExecutions(
      alice,
      jobId,
      (executions) => firstExecutionIn(CANCELLED)(executions) && executions[0]?.RunOutput !== undefined,
      "its execution cancelled, with the output its node reported",
    );

    expect(cancelled!.RunOutput).toMatchObject({ Stdout: "serving\n", stderr: "warming\n" });
    expect(cancelled!.ComputeState.StateType).toBe(CANCELLED);
    expect(await logLines(jobId)).toEqual(["serving\n", "warming\n"]);
    expect(await logLines(jobId, `execution_id=${cancelled!.ID}`)).toEqual(["serving\n", "warming\n"]);
    // Kept once: the execution was cancelled once, and the history has no entry of its own for the output.
    const history = await alice.history(jobId, "event_type=execution");
    expect(history.filter((h) => h.ExecutionState?.New === CANCELLED)).toHaveLength(1);
  }, 90_000);

  it("keeps the output of an earlier version's execution an update replaced", async () => {
    const service = (word: string) => ({
      ...shellJob(image, `trap 'exit 0' TERM; echo ${word}; while true; do sleep 1; done`, { type: "service" }),
      Name: "kept-across-versions",
    });
    const jobId = await alice.submit(service("one"));
    await untilExecutions(alice, jobId, firstExecutionIn(RUNNING), "version 1 running");
    await waitFor(
      async () => (await logLines(jobId)).includes("one\n"),
      20_000,
      () => "version 1's output",
    );

    await alice.put(service("two"));
    await waitFor(
      async () => {
        const res = await alice.call("GET", `${JOBS}/${jobId}/executions?job_version=1`);
        const [first] = (res.body.Items ?? []) as { ComputeState?: { StateType: number }; RunOutput?: unknown }[];
        return first?.ComputeState?.StateType === CANCELLED && first.RunOutput !== undefined;
      },
      30_000,
      () => "version 1's execution cancelled, with its output",
    );
    expect(await logLines(jobId, "job_version=1")).toEqual(["one\n"]);
    await alice.stop(jobId, "done with it");
  }, 90_000);
});
