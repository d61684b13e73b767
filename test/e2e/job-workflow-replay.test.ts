import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ExecutionCommand } from "../../machines/execution/execution-commands.ts";
import type { JobCommand } from "../../machines/job/job-commands.ts";
import { BACALHAU_JOB_DEFAULTS as defaults } from "../../machines/job/job-defaults.ts";
import { validateJobSubmission } from "../../src/actors/job-submission/validate-job-submission.ts";
import { executionIdOf, jobIdOf } from "../../machines/job/job-id.ts";
import { parseTaskResources } from "../../machines/job/task-resources.ts";
import { executionKind } from "../../src/actors/execution-kind.ts";
import { jobKind } from "../../src/actors/job-kind.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { defaultConfig } from "../../src/config/keys.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { NewEvent } from "../../src/events/store/event-store.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { forgetDeletedNodes } from "../../src/workflows/forget-deleted-nodes.ts";
import { jobFlow } from "../../src/workflows/jobs/job-flow.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * What a kill -9 leaves behind: the `jobs` workflow's checkpoint behind the last events (it is
 * saved once a second), and no job-views snapshot (written on a clean stop only), so at the
 * restart the job read model folds the whole store while the workflow replays its last steps.
 * A replayed step must act on a read model that has seen its input: here the replayed
 * `ExecutionCompleted` of the job's only execution must complete the job, however many events
 * the read model has to fold first.
 */
const KEY = "replay-key-0123456789abcdefghijklm";
const USERS: AuthUser[] = [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] }];
let orchestrator: RunningOrchestrator | undefined;

afterAll(async () => {
  await orchestrator?.stop();
});

type Append = { stream: string; events: NewEvent[] };

/** Events as a job's and an execution's actors would store them, made by their own deciders. */
function recorder(jobId: string, executionId: string) {
  const now = Date.now();
  const metadata = {
    time: new Date(now).toISOString(),
    actor: { type: "system", id: "test" },
    correlationId: jobId,
    causationId: jobId,
  };
  let job = jobKind.decider.initialState(jobId);
  let execution = executionKind.decider.initialState(executionId);
  const appends: Append[] = [];
  return {
    appends,
    job(command: JobCommand) {
      const decision = jobKind.decider.decide(command, job, { now });
      if (!decision.ok) throw new Error(`${command.type} refused: ${decision.refusal.message}`);
      for (const e of decision.events) {
        job = jobKind.decider.evolve(job, e, metadata.time);
        appends.push({ stream: `job-${jobId}`, events: [jobKind.encode(e, metadata, randomUUID())] });
      }
    },
    execution(command: ExecutionCommand) {
      const decision = executionKind.decider.decide(command, execution, { now });
      if (!decision.ok) throw new Error(`${command.type} refused: ${decision.refusal.message}`);
      for (const e of decision.events) {
        execution = executionKind.decider.evolve(execution, e, metadata.time);
        appends.push({ stream: `execution-${executionId}`, events: [executionKind.encode(e, metadata, randomUUID())] });
      }
    },
  };
}

const FILLER_JOBS = 20_000;
const RESOURCES = { CPU: "250m", Memory: "32Mb" };
const spec = {
  Type: "batch",
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: "busybox", Entrypoint: ["true"] } },
      Resources: RESOURCES,
    },
  ],
};
const create = (jobId: string, nodeId: string): ExecutionCommand => ({
  type: "Create",
  jobId,
  namespace: "default",
  nodeId,
  jobType: "batch",
  jobVersion: 1,
  partitionIndex: 0,
  resources: parseTaskResources(RESOURCES),
  executionTimeout: 0,
  timeoutBuffer: 60,
});
const output = {
  Stdout: "done\n",
  StdoutTruncated: false,
  stderr: "",
  StderrTruncated: false,
  ExitCode: 0,
  ErrorMsg: "",
};

describe("the jobs workflow after a kill -9", () => {
  it("a replayed ExecutionCompleted completes its job, though the job read model starts from the beginning of a long store", async () => {
    const dataDir = tempDir("shoal-replay-");
    const store = new SqliteEventStore(join(dataDir, "shoal.db"));
    // Many jobs before it (each submitted, then failed): what the read model folds before it reaches the job under
    // test.
    for (let chunk = 0; chunk < FILLER_JOBS; chunk += 1_000) {
      const appends: Promise<unknown>[] = [];
      for (let i = 0; i < 1_000; i++) {
        const fillerId = jobIdOf(randomUUID());
        const filler = recorder(fillerId, executionIdOf(randomUUID()));
        filler.job({ type: "Submit", submission: validateJobSubmission(spec, { jobId: fillerId, defaults }) });
        filler.job({ type: "Fail", reason: "filler" });
        appends.push(
          store.append(
            filler.appends[0]!.stream,
            filler.appends.flatMap((a) => a.events),
            "no_stream",
          ),
        );
      }
      await Promise.all(appends);
    }
    // The job under test: submitted, placed, run and ended on its node; the job's own end is the workflow's SettleJob.
    const jobId = jobIdOf(randomUUID());
    const life = recorder(jobId, executionIdOf(randomUUID()));
    life.job({ type: "Submit", submission: validateJobSubmission(spec, { jobId, defaults }) });
    life.execution(create(jobId, "n-gone"));
    life.job({ type: "Run" });
    life.execution({ type: "AcceptBid" });
    life.execution({ type: "Approve" });
    life.execution({ type: "Start" });
    life.execution({ type: "Complete", output });
    const appends = life.appends;
    let beforeEnd = 0;
    let head = 0;
    for (const a of appends) {
      const result = await store.append(a.stream, a.events, "any");
      if (a.events[0]!.type === "ExecutionCompleted") beforeEnd = head;
      head = result.position ?? head;
    }
    // The crash: the workflow had acted on everything up to the execution's end, not on it.
    await store.save(`workflow-${jobFlow.name}`, beforeEnd);
    await store.save(`workflow-${forgetDeletedNodes.name}`, head);
    await store.save("nats-event-publisher", head);
    await store.close();

    orchestrator = await startOrchestrator(
      {
        ...defaultConfig(),
        DataDir: dataDir,
        NodeID: "node-0",
        "API.Host": "127.0.0.1",
        "API.TLS.Disable": true, // TLS is not under test here
        "Orchestrator.NATS.TLS.Disable": true,
        "API.Port": 0,
        "API.Auth.Users": USERS,
        "Orchestrator.Host": "127.0.0.1",
        "Orchestrator.Port": await freePort(),
      },
      silentLogger,
    );
    let state = "";
    await waitFor(
      async () => {
        const res = await fetch(`${orchestrator!.apiUrl}/api/v1/orchestrator/jobs/${jobId}`, {
          headers: { authorization: `Bearer ${KEY}` },
        });
        state = ((await res.json()) as { Job?: { State?: { StateType?: string } } }).Job?.State?.StateType ?? "";
        return state === "Completed";
      },
      20_000,
      () => `job ${jobId} Completed, it is ${state}`,
    );
    expect(state).toBe("Completed");
  }, 120_000);
});
