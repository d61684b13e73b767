import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, until } from "../support/job-waits.ts";
import { shellJob } from "../support/shell-job.ts";

/**
 * Who did each thing in a job's history, on real components: alice (an API.Auth.Users user) submits and stops a job
 * over REST, the orchestrator's placement workflow puts it on a compute agent that runs it in Docker. Each entry's
 * Event.Details.Actor names the one who caused it, from the stored event's metadata.
 */
const ALICE_KEY = "alice-key-0123456789abcdefghijklm";
const USERS: AuthUser[] = [
  { Alias: "alice", APIKey: ALICE_KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] },
];
const nodeId = `ha-${randomUUID().slice(0, 8)}`;
let jobImage = "";
let orchestrator: RunningOrchestrator;
let cluster: DockerNodeOrchestrator | undefined;

const alice = new JobApiClient(
  () => orchestrator.apiUrl,
  () => ALICE_KEY,
);

beforeAll(async () => {
  jobImage = await dockerTestImage();
  cluster = await startDockerNodeOrchestrator("shoal-history-actor-", USERS, nodeId);
  orchestrator = cluster.orchestrator;
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("a job's history", () => {
  it("names alice on her submit and stop, the node on what it reported, the workflow on the placement", async () => {
    const jobId = await alice.submit(shellJob(jobImage, "sleep 60"));
    await until(alice, jobId, (j) => executionsOf(j)[0]?.ComputeState?.StateType === 6, "the job runs");
    const stop = await alice.stop(jobId, "maintenance window");
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    const ended = await until(
      alice,
      jobId,
      (j) => j.Job.State.StateType === "Stopped" && executionsOf(j)[0]?.ComputeState?.StateType === 11,
      "the job and its execution are stopped",
    );
    const executionId = executionsOf(ended)[0]!.ID as string;
    const alicesDoing = { Actor: "operator:alice" };
    const node = { Actor: `node:${nodeId}` };
    const workflow = { Actor: "workflow:jobs" };
    // Sorted (and each Details by key): the node's report that it started and the workflow's JobStarted race each
    // other into the store.
    const rows = (entries: readonly Body[]) =>
      entries
        .map((h) => {
          const details = Object.entries(h.Event.Details as Record<string, string>).sort();
          return JSON.stringify([h.Type, h.ExecutionID ?? "", h.Event.Topic, h.Event.Message, details]);
        })
        .sort();
    const job = (topic: string, message: string, details: Record<string, string>) => ({
      Type: "JobLevel",
      Event: { Topic: topic, Message: message, Details: details },
    });
    const execution = (topic: string, message: string, details: Record<string, string>) => ({
      Type: "ExecutionLevel",
      ExecutionID: executionId,
      Event: { Topic: topic, Message: message, Details: details },
    });
    const history = await alice.history(jobId);
    expect(rows(history)).toEqual(
      rows([
        job("Submission", "Job submitted", alicesDoing),
        execution("Scheduling", `Requested execution on ${nodeId}`, {
          ...workflow,
          Reason: "the job was submitted",
          NodeID: nodeId,
        }),
        execution("Exec Scanning", "Accepted job", { ...node, Reason: "the node accepted the bid" }),
        execution("Execution", "Running", { ...workflow, Reason: "a node accepted the bid" }),
        job("State Update", "Running", { ...workflow, Reason: "a node accepted the bid", NewState: "Running" }),
        execution("Execution", "Running", { ...node, Reason: "the execution started" }),
        // The stop's own Reason (Bacalhau's) is the one alice gave: not repeated, not replaced.
        job("Scheduling", "Job requested to stop before completion", { ...alicesDoing, Reason: "maintenance window" }),
        execution("Scheduling", "Execution stop requested because job has been stopped", {
          ...workflow,
          Reason: "the job ended (JobStopped)",
        }),
      ]),
    );
    // The job's detail with its history carries the same entries.
    expect((await alice.job(jobId)).History.Items).toEqual(history);
  });
});
