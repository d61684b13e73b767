import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { STOPPED_FOR_JOB_UPDATE } from "../../src/scheduler/outdated-executions.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { dockerTestImageTagged } from "../support/docker-test-image.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { untilExecutions } from "../support/job-waits.ts";
import { shellJob } from "../support/shell-job.ts";

/**
 * A daemon job updated to a new image on three real compute nodes running Docker, with the scheduler's rate limit at
 * one execution per evaluation: its executions are replaced node by node, each node's old one stopped and its new one
 * created in the same evaluation, the next node only an ExecutionLimitBackoff later. Asserted on the order the store
 * gave the events (the history's SeqNum), never on wall-clock time.
 */
const ALICE_KEY = "alice-key-rolling-0123456789abcdefgh";
const USERS: AuthUser[] = [
  {
    Alias: "alice",
    APIKey: ALICE_KEY,
    Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }],
  },
];
const JOBS = "/api/v1/orchestrator/jobs";
/** Bacalhau's ComputeState numbers. */
const RUNNING = 6;
const CANCELLED = 11;
const suite = randomUUID().slice(0, 6);
const nodeIds = ["a", "b", "c"].map((n) => `roll-${n}-${suite}`);
let cluster: DockerNodeOrchestrator | undefined;
let before = "";
let after = "";

const alice = new JobApiClient(
  () => cluster?.orchestrator.apiUrl ?? "",
  () => ALICE_KEY,
);
const daemon = (image: string) => ({
  ...shellJob(image, "sleep 3600", { type: "daemon", resources: { CPU: "100m", Memory: "16Mb" } }),
  Name: `edge-agent-${suite}`,
});
const allExecutions = async (jobId: string): Promise<Body[]> => {
  const res = await alice.call("GET", `${JOBS}/${jobId}/executions?all_job_versions=true`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.Items as Body[];
};
const ofVersion = (executions: readonly Body[], version: number) => executions.filter((e) => e.JobVersion === version);
const running = (executions: readonly Body[]) => executions.filter((e) => e.ComputeState?.StateType === RUNNING);

const service = (image: string) => ({
  ...shellJob(image, "sleep 3600", { type: "service", resources: { CPU: "100m", Memory: "16Mb" } }),
  Name: `web-${suite}`,
  Count: 3,
});
const nodeAction = async (nodeId: string, Action: "cordon" | "uncordon") => {
  const res = await alice.call("PUT", `/api/v1/orchestrator/nodes/${nodeId}`, { Action, Message: "maintenance" });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};
const jobState = async (jobId: string): Promise<string> =>
  (await alice.call("GET", `${JOBS}/${jobId}`)).body.Job.State.StateType as string;
const jobMessage = async (jobId: string): Promise<string> =>
  (await alice.call("GET", `${JOBS}/${jobId}`)).body.Job.State.Message as string;
/** The job's history entries of its current version whose message starts so. */
const jobEntries = async (jobId: string, start: string): Promise<Body[]> =>
  (await alice.history(jobId, "event_type=job")).filter((h) => (h.Event.Message as string).startsWith(start));
const WAITS = "Version 2 waits for room: the earlier version's executions run on until it can be placed.";

/** Waits until version 2 runs on every node and each version 1 execution was stopped for the update. */
async function untilReplaced(jobId: string): Promise<Body[]> {
  const done = await untilExecutions(
    { executions: allExecutions },
    jobId,
    (all) =>
      running(ofVersion(all, 2)).length === 3 &&
      ofVersion(all, 1).every((e) => e.ComputeState?.StateType === CANCELLED),
    "version 2 running on every node, version 1 stopped",
    45_000,
  );
  expect(ofVersion(done, 1).map((e) => e.ComputeState.Message)).toEqual(nodeIds.map(() => STOPPED_FOR_JOB_UPDATE));
  return done;
}
/** Waits until version 1 runs on every node. */
const untilVersion1Everywhere = (jobId: string) =>
  untilExecutions(
    { executions: allExecutions },
    jobId,
    (all) => running(ofVersion(all, 1)).length === 3,
    "version 1 running on every node",
  );

beforeAll(async () => {
  [before, after] = await Promise.all([dockerTestImageTagged("rolling-1"), dockerTestImageTagged("rolling-2")]);
  cluster = await startDockerNodeOrchestrator("shoal-rolling-", USERS, nodeIds, {
    "Orchestrator.Scheduler.MaxExecutionsPerEval": 1,
    "Orchestrator.Scheduler.ExecutionLimitBackoff": 2_000,
  });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("a daemon job updated to a new image", () => {
  it("has its executions replaced node by node, never every node's stopped before a new one runs", async () => {
    const jobId = await alice.submit(daemon(before));
    await untilVersion1Everywhere(jobId);

    expect((await alice.put(daemon(after))).JobID).toBe(jobId);
    const done = await untilReplaced(jobId);
    const old = ofVersion(done, 1);
    const current = ofVersion(done, 2);
    expect(new Set(current.map((e) => e.NodeID))).toEqual(new Set(nodeIds));

    // In the store's order: when each old execution stopped, when each new one was created and when it ran.
    const history = await alice.history(jobId, "all_job_versions=true&event_type=execution");
    const entries = (id: string) => history.filter((h) => h.ExecutionID === id);
    const seqOf = (id: string, state?: number) =>
      entries(id).find((h) => state === undefined || h.ExecutionState.New === state)?.SeqNum as number;
    const stops = old
      .map((e) => ({ node: e.NodeID as string, at: seqOf(e.ID, CANCELLED) }))
      .sort((x, y) => x.at - y.at);
    const newOn = (node: string) => current.find((e) => e.NodeID === node) as Body;
    for (const [i, stop] of stops.entries()) {
      const created = seqOf(newOn(stop.node).ID);
      // Each node's new execution comes with its old one's stop, before the next node's old one stops.
      expect(created, `node ${stop.node}'s new execution after its old one stopped`).toBeGreaterThan(stop.at);
      if (i + 1 < stops.length)
        expect(created, `node ${stop.node}'s new execution before the next stop`).toBeLessThan(
          (stops[i + 1] as { at: number }).at,
        );
    }
    const firstNewRunning = Math.min(...current.map((e) => seqOf(e.ID, RUNNING)));
    expect(firstNewRunning, "a new execution ran before the last old one stopped").toBeLessThan(
      (stops.at(-1) as { at: number }).at,
    );
    expect(new Set(stops.map((s) => s.node))).toEqual(new Set(nodeIds));

    // The job's history shows both versions, and who updated it.
    const jobHistory = await alice.history(jobId, "all_job_versions=true&event_type=job");
    const submissions = jobHistory.filter((h) => h.Event.Topic === "Submission");
    expect(submissions.map((h) => [h.JobVersion, h.Event.Message])).toEqual([
      [1, "Job submitted"],
      [2, "Job updated"],
    ]);
    expect(submissions[1]?.Event.Details).toMatchObject({ Actor: "operator:alice" });
    const versions = await alice.call("GET", `${JOBS}/${jobId}/versions`);
    expect(
      versions.body.Items.map((j: Body) => [j.Version, j.Tasks[0].Engine.Params.Image, j.State.StateType]),
    ).toEqual([
      [1, before, expect.any(String)],
      [2, after, "Running"],
    ]);
  }, 90_000);
});

describe("a service job updated while one of its nodes is cordoned", () => {
  it("keeps that node's earlier replica running until its replacement has a node, and never fails", async () => {
    const cordoned = nodeIds[2] as string;
    const jobId = await alice.submit(service(before));
    await untilVersion1Everywhere(jobId);
    await nodeAction(cordoned, "cordon");
    expect((await alice.put(service(after))).JobID).toBe(jobId);
    await untilExecutions(
      { executions: allExecutions },
      jobId,
      (all) => running(ofVersion(all, 2)).length === 2,
      "version 2 running on the two open nodes",
      45_000,
    );
    // The rollout's next turn comes an ExecutionLimitBackoff (2 s) after the last stop: several turns later the
    // cordoned node's replica of version 1 still runs, and the job was not failed for want of a node. It says why,
    // on the job and in its history, recorded once for the reason rather than once per evaluation.
    let holds = 0;
    for (let turn = 0; turn < 5; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(await jobState(jobId)).toBe("Running");
      const all = await allExecutions(jobId);
      expect(running(ofVersion(all, 1)).map((e) => e.NodeID)).toEqual([cordoned]);
      expect(running(ofVersion(all, 2))).toHaveLength(2);
      const message = await jobMessage(jobId);
      expect(message.startsWith(WAITS), message).toBe(true);
      expect(message).toContain(`Node ${cordoned}: node is cordoned (maintenance)`);
      const held = await jobEntries(jobId, WAITS);
      expect(held.at(-1)?.Event.Message).toBe(message);
      expect(held.at(-1)).toMatchObject({ JobState: { Previous: "Running", New: "Running" } });
      if (turn > 0) expect(held.length, "a hold recorded again for the same reason").toBe(holds);
      holds = held.length;
    }

    // Room again: the earlier replica is stopped and replaced there, and the job no longer says it waits.
    await nodeAction(cordoned, "uncordon");
    const done = await untilReplaced(jobId);
    expect(new Set(running(ofVersion(done, 2)).map((e) => e.NodeID))).toEqual(new Set(nodeIds));
    expect(await jobState(jobId)).toBe("Running");
    expect(await jobMessage(jobId)).toBe("");
    expect(await jobEntries(jobId, "Version 2 found room: its placement goes on")).toHaveLength(1);
  }, 120_000);
});
