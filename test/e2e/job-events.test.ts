import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import Docker from "dockerode";
import { connect, credsAuthenticator, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionHistoryEvent } from "../../machines/job/history-event.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import { defaultConfig } from "../../src/config/keys.ts";
import type { ExecutionEvent } from "../../src/events/catalog/execution-events.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { ShoalProcess, waitFor } from "../support/shoal-process.ts";

/**
 * Every transition of a job and its executions appears once, in order, on NATS and in history:
 * a downstream reader (the embedded nats-server's event-reader credentials, a plain core
 * subscription) sees the same events, in the same order, as `GET /jobs/{id}/history` lists, for
 * a job that completes and one that is stopped. The steps between an execution's New and its end
 * are the dispatcher's and are not pinned: the two sequences are compared with each other.
 */
const KEY = "events-key-0123456789abcdefghijklm";
const USERS: AuthUser[] = [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] }];
const docker = new Docker();
const nodeId = `je-${randomUUID().slice(0, 8)}`;
let image = "";
let orchestrator: RunningOrchestrator;
let compute: ShoalProcess | undefined;
let reader: NatsConnection;

type Body = Record<string, any>;
interface Received {
  readonly subject: string;
  readonly id: string;
  readonly type: string;
  readonly stream: string;
  readonly position: number;
  readonly data: Record<string, unknown>;
}
const received: Received[] = [];

async function call(method: string, path: string): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${orchestrator.apiUrl}${path}`, { method, headers: { authorization: `Bearer ${KEY}` } });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Body };
}
async function submit(command: string): Promise<string> {
  const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/jobs`, {
    method: "PUT",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({
      Job: { Type: "batch", Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } }, Resources: { CPU: "250m", Memory: "32Mb" } }] },
    }),
  });
  const body = (await res.json()) as Body;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.JobID as string;
}
const executionsOf = async (jobId: string) => (await call("GET", `/api/v1/orchestrator/jobs/${jobId}/executions`)).body.Items as Body[];
/** Every history entry of the job, all pages. */
async function historyOf(jobId: string): Promise<Body[]> {
  const items: Body[] = [];
  let token = "";
  do {
    const page = (await call("GET", `/api/v1/orchestrator/jobs/${jobId}/history?limit=100${token ? `&next_token=${token}` : ""}`)).body;
    items.push(...(page.Items as Body[]));
    token = page.NextToken ?? "";
  } while (token !== "");
  return items;
}
/** Once every execution of the job has ended (so nothing more is coming), and the publisher has had JetStream take every event up to then. */
async function quiet(jobId: string, jobState: string): Promise<void> {
  await waitFor(async () => {
    const job = (await call("GET", `/api/v1/orchestrator/jobs/${jobId}`)).body;
    if (job.Job?.State?.StateType !== jobState) return false;
    return (await executionsOf(jobId)).every((e) => [9, 10, 11].includes(e.ComputeState.StateType));
  }, 60_000, () => `job ${jobId} ${jobState} with every execution ended`);
  const history = await historyOf(jobId);
  const last = Math.max(...history.map((h) => h.SeqNum as number));
  await waitFor(() => orchestrator.publisher.position >= last, 30_000, () => `events up to ${last} published`);
  // What the server sent before the publisher's ack is in once a round trip through it returns.
  await reader.flush();
}
/** The events a reader saw of the job and its executions, in arrival order. */
async function seenOf(jobId: string): Promise<Received[]> {
  const executionStreams = new Set((await executionsOf(jobId)).map((e) => `execution-${e.ID}`));
  return received.filter((r) => r.stream === `job-${jobId}` || executionStreams.has(r.stream));
}
const hasHistoryEntry = (r: Received) => r.stream.startsWith("job-") || executionHistoryEvent({ type: r.type, data: r.data } as ExecutionEvent) !== undefined;

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
  const history = await historyOf(jobId);
  const entries = seen.filter(hasHistoryEntry);
  expect(history.map((h) => h.SeqNum)).toEqual(entries.map((r) => r.position));
  expect(history.map((h) => [h.Type, h.ExecutionID ?? ""])).toEqual(
    entries.map((r) => (r.stream.startsWith("job-") ? ["JobLevel", ""] : ["ExecutionLevel", r.stream.slice("execution-".length)])),
  );
  return seen;
}
const typesOf = (seen: Received[], prefix: string) => seen.filter((r) => r.stream.startsWith(prefix)).map((r) => r.type);

beforeAll(async () => {
  image = await dockerTestImage();
  orchestrator = await startOrchestrator(
    {
      ...defaultConfig(),
      DataDir: tempDir("shoal-je-orch-"),
      NodeID: "node-0",
      "API.Host": "127.0.0.1",
      "API.Port": 0,
      "API.Auth.Users": USERS,
      "Orchestrator.Host": "127.0.0.1",
      "Orchestrator.Port": await freePort(),
    },
    silentLogger,
  );
  reader = await connect({ servers: orchestrator.natsUrl, authenticator: credsAuthenticator(readFileSync(orchestrator.eventsReader!.credsFile)) });
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
  compute = ShoalProcess.start([
    "compute", "--node-id", nodeId,
    "-c", `DataDir=${tempDir(`shoal-je-${nodeId}-`)}`,
    "-c", `Compute.Orchestrators=${orchestrator.natsUrl}`,
    "-c", `Compute.Auth.Token=${orchestrator.joinToken.token}`,
    "-c", "Compute.Heartbeat.Interval=500ms",
    "-c", "Compute.Heartbeat.ResourceUpdateInterval=500ms",
    "-c", "Compute.AllocatedCapacity.CPU=1",
    "-c", "Compute.AllocatedCapacity.Memory=256Mi",
    "-c", "Compute.Docker.StopGracePeriod=1s",
  ]);
  await waitFor(async () => (await call("GET", `/api/v1/orchestrator/nodes/${nodeId}`)).body?.Node?.Membership === "APPROVED", 30_000, () => "compute node approved");
}, 120_000);

afterAll(async () => {
  await reader?.close();
  if (compute && compute.child.exitCode === null) await compute.kill("SIGTERM");
  await orchestrator?.stop();
  for (const c of await docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } })) await docker.getContainer(c.Id).remove({ force: true });
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
    await waitFor(async () => (await executionsOf(jobId))[0]?.ComputeState?.StateType === 6, 30_000, () => "execution Running");
    const stop = await call("DELETE", `/api/v1/orchestrator/jobs/${jobId}?reason=enough`);
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    await quiet(jobId, "Stopped");
    const seen = await expectSameAsHistory(jobId);
    expect(typesOf(seen, "job-")).toEqual(["JobSubmitted", "JobStarted", "JobStopped"]);
    const execution = typesOf(seen, "execution-");
    expect(execution[0]).toBe("ExecutionCreated");
    expect(execution.at(-1)).toBe("ExecutionCancelled");
    // Cancelled by the stop: the node's later report of the end changes nothing and stores nothing.
    expect(execution.filter((t) => ["ExecutionCompleted", "ExecutionFailed", "ExecutionCancelled"].includes(t))).toEqual(["ExecutionCancelled"]);
  }, 90_000);
});
