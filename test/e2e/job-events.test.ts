import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect, credsAuthenticator, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionHistoryEvent } from "../../machines/job/history-event.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ExecutionEvent } from "../../src/events/catalog/execution-events.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { startComputeProcess, untilApproved } from "../support/compute-processes.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { JobApiClient } from "../support/job-api-client.ts";
import { firstExecutionIn, untilExecutions } from "../support/job-waits.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { shellJob } from "../support/shell-job.ts";
import { waitFor, type ShoalProcess } from "../support/shoal-process.ts";

/**
 * Every transition of a job and its executions appears once, in order, on NATS and in history:
 * a downstream reader (the embedded nats-server's event-reader credentials, a plain core
 * subscription) sees the same events, in the same order, as `GET /jobs/{id}/history` lists, for
 * a job that completes and one that is stopped. The steps between an execution's New and its end
 * are the dispatcher's and are not pinned: the two sequences are compared with each other.
 */
const KEY = "events-key-0123456789abcdefghijklm";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const nodeId = `je-${randomUUID().slice(0, 8)}`;
let image = "";
let orchestrator: RunningOrchestrator;
let compute: ShoalProcess | undefined;
let reader: NatsConnection;

interface Received {
  readonly subject: string;
  readonly id: string;
  readonly type: string;
  readonly stream: string;
  readonly position: number;
  readonly data: Record<string, unknown>;
}
const received: Received[] = [];

const jobs = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);
const submit = (command: string) => jobs.submit(shellJob(image, command));
/**
 * Once every execution of the job has ended (so nothing more is coming), and the publisher has had JetStream take every
 * event up to then.
 */
async function quiet(jobId: string, jobState: string): Promise<void> {
  await waitFor(
    async () => {
      const job = (await jobs.call("GET", `/api/v1/orchestrator/jobs/${jobId}`)).body;
      if (job.Job?.State?.StateType !== jobState) return false;
      return (await jobs.executions(jobId)).every((e) => [9, 10, 11].includes(e.ComputeState.StateType));
    },
    60_000,
    () => `job ${jobId} ${jobState} with every execution ended`,
  );
  const history = await jobs.history(jobId);
  const last = Math.max(...history.map((h) => h.SeqNum as number));
  await waitFor(
    () => orchestrator.publisher.position >= last,
    30_000,
    () => `events up to ${last} published`,
  );
  // What the server sent before the publisher's ack is in once a round trip through it returns.
  await reader.flush();
}
/** The events a reader saw of the job and its executions, in arrival order. */
async function seenOf(jobId: string): Promise<Received[]> {
  const executionStreams = new Set((await jobs.executions(jobId)).map((e) => `execution-${e.ID}`));
  return received.filter((r) => r.stream === `job-${jobId}` || executionStreams.has(r.stream));
}
const hasHistoryEntry = (r: Received) =>
  r.stream.startsWith("job-") || executionHistoryEvent({ type: r.type, data: r.data } as ExecutionEvent) !== undefined;

/** Once, in order, subject and stream agreeing, and one-to-one with the history. */
async function expectSameAsHistory(jobId: string): Promise<Received[]> {
  const seen = await seenOf(jobId);
  const positions = seen.map((r) => r.position);
  expect(positions, "arrival order is store order").toEqual([...positions].sort((a, b) => a - b));
  expect(new Set(positions).size, "no event twice").toBe(positions.length);
  expect(new Set(seen.map((r) => r.id)).size).toBe(seen.length);
  for (const r of seen) {
    const [category, ...entity] = r.stream.split("-");
    expect(r.subject).toBe(`shoal.events.${category}.${entity.join("-")}.${r.type}`);
  }
  const history = await jobs.history(jobId);
  const entries = seen.filter(hasHistoryEntry);
  expect(history.map((h) => h.SeqNum)).toEqual(entries.map((r) => r.position));
  expect(history.map((h) => [h.Type, h.ExecutionID ?? ""])).toEqual(
    entries.map((r) =>
      r.stream.startsWith("job-") ? ["JobLevel", ""] : ["ExecutionLevel", r.stream.slice("execution-".length)],
    ),
  );
  return seen;
}
const typesOf = (seen: Received[], prefix: string) =>
  seen.filter((r) => r.stream.startsWith(prefix)).map((r) => r.type);

beforeAll(async () => {
  image = await dockerTestImage();
  orchestrator = await startOrchestrator(
    await ownNatsOrchestratorConfig("shoal-je-orch-", { "API.Auth.Users": USERS }),
    silentLogger,
  );
  reader = await connect({
    servers: orchestrator.natsUrl,
    authenticator: credsAuthenticator(readFileSync(orchestrator.eventsReader!.credsFile)),
  });
  const decoder = new TextDecoder();
  for (const subject of ["shoal.events.job.>", "shoal.events.execution.>"]) {
    reader.subscribe(subject, {
      callback: (err, msg) => {
        if (err) throw err;
        received.push({ subject: msg.subject, ...(JSON.parse(decoder.decode(msg.data)) as Omit<Received, "subject">) });
      },
    });
  }
  await reader.flush();
  compute = startComputeProcess({
    nodeId,
    dataDir: tempDir(`shoal-je-${nodeId}-`),
    orchestrators: orchestrator.natsUrl,
    token: orchestrator.joinToken.token,
    settings: ["Compute.Docker.StopGracePeriod=1s"],
  });
  await untilApproved(jobs, nodeId, compute);
}, 120_000);

afterAll(async () => {
  await reader?.close();
  if (compute && compute.child.exitCode === null) await compute.kill("SIGTERM");
  await orchestrator?.stop();
  await removeContainersOf(nodeId);
});

describe("a job's transitions on NATS and in its history", () => {
  it("a job run to completion: each event once, in store order, the same as its history", async () => {
    const jobId = await submit("echo once");
    await quiet(jobId, "Completed");
    const seen = await expectSameAsHistory(jobId);
    expect(typesOf(seen, "job-")).toEqual(["JobSubmitted", "JobStarted", "JobCompleted"]);
    const execution = typesOf(seen, "execution-");
    expect(execution[0]).toBe("ExecutionCreated");
    expect(execution.at(-1)).toBe("ExecutionCompleted");
    expect(execution.filter((t) => t === "ExecutionStarted")).toHaveLength(1);
  }, 90_000);

  it("a job stopped while it runs: each event once, in store order, the same as its history", async () => {
    const jobId = await submit("sleep 30");
    await untilExecutions(jobs, jobId, firstExecutionIn(6), "execution Running");
    const stop = await jobs.stop(jobId, "enough");
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    await quiet(jobId, "Stopped");
    // The node's later report of the end keeps its output (no history entry of its own): published like the rest.
    await waitFor(
      async () => typesOf(await seenOf(jobId), "execution-").includes("ExecutionOutputKept"),
      30_000,
      () => "the cancelled execution's output kept and published",
    );
    const seen = await expectSameAsHistory(jobId);
    expect(typesOf(seen, "job-")).toEqual(["JobSubmitted", "JobStarted", "JobStopped"]);
    const execution = typesOf(seen, "execution-");
    expect(execution[0]).toBe("ExecutionCreated");
    expect(execution.slice(-2)).toEqual(["ExecutionCancelled", "ExecutionOutputKept"]);
    // Cancelled by the stop: the node's later report of the end keeps its output and ends nothing again.
    expect(
      execution.filter((t) => ["ExecutionCompleted", "ExecutionFailed", "ExecutionCancelled"].includes(t)),
    ).toEqual(["ExecutionCancelled"]);
  }, 90_000);
});
