import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { DEFAULT_JOB_LIMITS } from "../../machines/job/job-limits.ts";
import { problemText, validateJobSubmission } from "../../src/actors/job-submission/validate-job-submission.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { encodeJobEvent } from "../../src/events/catalog/job-event-codec.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { settled } from "../support/job-waits.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { shellJob } from "../support/shell-job.ts";
import { storedEvents } from "../support/stored-events.ts";
import { startJoined } from "../support/start-joined.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * One job spec must never brick the orchestrator: a spec over a limit is refused at submission
 * (400, the field named, nothing stored); one already in the store (written before the limits,
 * appended here with the orchestrator's own codec) fails at start with the reason, and the jobs
 * after it run on a real compute node and Docker.
 */
const KEY = "limits-key-0123456789abcdefghijklm";
const USERS: AuthUser[] = [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] }];
const MIB = 1024 * 1024;
const docker = new Docker();
let image = "";
let orchestrator: RunningOrchestrator | undefined;
const agents: ComputeAgent[] = [];
const nodeIds: string[] = [];
const api = new JobApiClient(
  () => (orchestrator as RunningOrchestrator).apiUrl,
  () => KEY,
);

/** A spec as an orchestrator without limits stored it: validated, defaults in, limits as loose as Shoal was. */
function storedSpecOf(job: unknown, jobId: string) {
  const loose = { ...DEFAULT_JOB_LIMITS, MaxCount: 1e12, MaxEnvValueLength: 1e6 };
  const checked = validateJobSubmission(job, { jobId, defaults: BACALHAU_JOB_DEFAULTS, limits: loose });
  if (!checked.ok) throw new Error(checked.problems.map(problemText).join("; "));
  return checked.spec;
}

/** Appends a JobSubmitted of `job` to the SQLite store of `dataDir`, as `shoal serve` would have: its id. */
async function storeJob(dataDir: string, job: unknown): Promise<string> {
  const jobId = `j-${randomUUID()}`;
  const store = new SqliteEventStore(join(dataDir, "shoal.db"));
  const actor = { type: "operator" as const, id: "before-the-limits" };
  const metadata = { time: new Date().toISOString(), actor, correlationId: jobId, causationId: jobId };
  const data = { JobID: jobId, Job: storedSpecOf(job, jobId), Version: 1, Warnings: [] };
  const event = { type: "JobSubmitted" as const, data };
  await store.append(`job-${jobId}`, [encodeJobEvent(event, metadata, randomUUID())], "no_stream");
  await store.close();
  return jobId;
}

async function startNode(): Promise<string> {
  const nodeId = `limits-${randomUUID().slice(0, 8)}`;
  nodeIds.push(nodeId);
  const capacity = { cpuMillis: 1000, memoryBytes: 256 * MIB };
  const executor = new DockerExecutor({ nodeId, capacity, logger: silentLogger, docker, stopGraceSeconds: 0 });
  const running = orchestrator as RunningOrchestrator;
  const token = running.joinToken.token;
  const agent = testAgent({ nodeId, orchestrators: [running.natsUrl], token, executor, resourceUpdateMs: 200 });
  agents.push(agent);
  await startJoined(agent, running.manager, nodeId);
  return nodeId;
}

/** A batch job waits (Queued) up to a minute for a node: a stored job is placed once the node joins. */
const config = (prefix: string): Promise<ShoalConfig> =>
  ownNatsOrchestratorConfig(prefix, {
    "API.Auth.Users": USERS,
    "JobDefaults.Batch.Task.Timeouts.QueueTimeout": 60_000,
  });

/** The messages of the job's history, as the API serves it. */
const historyText = (job: Body): string => JSON.stringify(job.History?.Items ?? []);

/** The message of the job's stored JobFailed event ("" when it has none). */
async function failedWith(dataDir: string, jobId: string): Promise<string> {
  const failed = (await storedEvents(dataDir)).find((e) => e.stream === `job-${jobId}` && e.type === "JobFailed");
  return String((failed?.data as { Message?: string } | undefined)?.Message ?? "");
}

beforeAll(async () => {
  image = await dockerTestImage();
}, 60_000);

afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  await orchestrator?.stop();
  orchestrator = undefined;
});

afterAll(async () => {
  await removeContainersOf(...nodeIds);
});

describe("submission refuses a job over a limit: 400 naming the field, nothing stored", () => {
  it("Count 1e9, a 9,000-character env value, a Privileged docker param", async () => {
    const c = await config("shoal-limits-api-");
    orchestrator = await startOrchestrator(c, silentLogger);
    const base = shellJob(image, "echo hi");
    const main = base.Tasks[0];
    const cases: [unknown, string][] = [
      [
        { ...shellJob(image, "echo hi"), Count: 1_000_000_000 },
        "Count: job count 1000000000 is more than the limit of 1000 (JobLimits.MaxCount)",
      ],
      [{ ...base, Tasks: [{ ...main, Env: { BIG: "x".repeat(9000) } }] }, "Tasks[0].Env.BIG:"],
      [
        { ...base, Tasks: [{ ...main, Engine: { Type: "docker", Params: { Image: image, Privileged: true } } }] },
        'Tasks[0].Engine.Params.Privileged: docker engine param "Privileged" is not supported',
      ],
    ];
    for (const [job, message] of cases) {
      const res = await api.call("PUT", "/api/v1/orchestrator/jobs", { Job: job });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.Message).toContain(message);
    }
    const stored = await storedEvents(c.DataDir);
    expect(stored.filter((e) => e.stream.startsWith("job-"))).toEqual([]);
  }, 60_000);
});

describe("a store that already holds a job over the limits", () => {
  for (const [what, job, limit] of [
    [
      "Count 1e9",
      { ...shellJobLater(), Count: 1_000_000_000 },
      "Count: job count 1000000000 is more than the limit of 1000 (JobLimits.MaxCount)",
    ],
    ["a 9,000-character env value", withEnv({ BIG: "x".repeat(9000) }), "(JobLimits.MaxEnvValueLength)"],
  ] as const) {
    it(`${what}: a start fails that job with the reason and serves; the next job runs to Completed`, async () => {
      const c = await config("shoal-limits-stored-");
      const bad = await storeJob(c.DataDir, resolveImage(job));
      orchestrator = await startOrchestrator(c, silentLogger);
      await startNode();
      const ended = await settled(api, bad, ["Failed", "Completed", "Running"], 30_000);
      expect(ended.Job.State.StateType).toBe("Failed");
      const message = await failedWith(c.DataDir, bad);
      expect(message).toContain("the job breaks today's job limits and cannot run");
      expect(message).toContain(limit);
      expect(historyText(ended)).toContain(limit);
      expect(ended.Executions?.Items ?? []).toEqual([]);

      const next = await api.submit(shellJob(image, "echo after"));
      const done = await settled(api, next, ["Completed", "Failed"], 60_000);
      expect(done.Job.State.StateType).toBe("Completed");
    }, 120_000);
  }
});

/** The test image is known only once built: specs name it by this placeholder until then. */
const IMAGE = "<test-image>";
/** It waits for a node (Queued) rather than failing for want of one: it is placed once the node joins. */
function shellJobLater() {
  return shellJob(IMAGE, "echo never", { timeouts: { QueueTimeout: 60 } });
}
function withEnv(env: Record<string, string>) {
  const base = shellJobLater();
  return { ...base, Tasks: [{ ...base.Tasks[0], Env: env }] };
}
function resolveImage(job: unknown): unknown {
  return JSON.parse(JSON.stringify(job).replaceAll(IMAGE, image));
}
