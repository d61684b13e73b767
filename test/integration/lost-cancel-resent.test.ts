import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { EXECUTION_LABEL } from "../../src/compute/executor/docker-labels.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { JobApiClient } from "../support/job-api-client.ts";
import { firstExecutionIn, untilExecutions } from "../support/job-waits.ts";
import { containersOf, removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { ownedDockerExecutor } from "../support/owned-docker-executor.ts";
import { waitFor } from "../support/shoal-process.ts";
import { shellJob } from "../support/shell-job.ts";
import { startJoined } from "../support/start-joined.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * A job stopped while its node's agent is down (its container running on): the CancelExecution published then is
 * dropped by NATS, as nobody listens. The agent started again over the same DataDir adopts the container; the
 * orchestrator, which keeps sending the cancel until the node reports the execution ended, has it stopped and removed,
 * and the execution is recorded cancelled once. Also when the orchestrator restarts before the node is back: the
 * cancels it was sending died with it, and it derives them again from the stored executions at start. Real
 * nats-server, SQLite and Docker.
 */
const KEY = "alice-key-lost-cancel-0123456789abcd";
const USERS: AuthUser[] = [{ Alias: "alice", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] }];
const RUNNING = 6;
const CANCELLED = 11;
const nodeId = `lost-cancel-${randomUUID().slice(0, 8)}`;
const dataDir = tempDir("shoal-lost-cancel-node-");
let config: ShoalConfig;
let orchestrator: RunningOrchestrator | undefined;
/** The node's agent while it runs (one at a time: they share the DataDir). */
let live: ComputeAgent | undefined;
let image = "";

const alice = new JobApiClient(
  () => orchestrator?.apiUrl ?? "",
  () => KEY,
);

/** The node's agent over its one DataDir (and container owner id), started and joined. */
async function startNode(): Promise<ComputeAgent> {
  await stopNode();
  const agent = testAgent({
    nodeId,
    dataDir,
    orchestrators: [orchestrator!.natsUrl],
    token: orchestrator!.joinToken.token,
    executor: ownedDockerExecutor(nodeId, dataDir),
  });
  live = agent;
  await startJoined(agent, orchestrator!.manager, nodeId);
  return agent;
}

/** The node's agent goes away; its containers run on. */
async function stopNode(): Promise<void> {
  await live?.stop();
  live = undefined;
}

const containerOf = async (executionId: string) =>
  (await containersOf(nodeId)).find((c) => c.Labels[EXECUTION_LABEL] === executionId);

beforeAll(async () => {
  image = await dockerTestImage();
  config = await ownNatsOrchestratorConfig("shoal-lost-cancel-", { "API.Auth.Users": USERS });
  orchestrator = await startOrchestrator(config, silentLogger);
}, 120_000);

afterAll(async () => {
  await stopNode();
  await orchestrator?.stop();
  await removeContainersOf(nodeId);
});

/** A daemon job's execution running in its container on the node, then the agent gone and the job stopped meanwhile. */
async function stoppedWhileAway(): Promise<{ jobId: string; executionId: string }> {
  await startNode();
  const spec = shellJob(image, "sleep 3600", { type: "daemon", resources: { CPU: "100m", Memory: "16Mb" } });
  const jobId = await alice.submit(spec);
  const [execution] = await untilExecutions(alice, jobId, firstExecutionIn(RUNNING), "its execution running");
  const executionId = execution!.ID as string;
  expect((await containerOf(executionId))?.State).toBe("running");

  // The agent goes away, its container running on; the stop is stored and its cancel published to nobody.
  await stopNode();
  const stopped = await alice.stop(jobId, "stopped while its node was away");
  expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
  await untilExecutions(alice, jobId, firstExecutionIn(CANCELLED), "its execution cancelled");
  expect((await containerOf(executionId))?.State).toBe("running");
  return { jobId, executionId };
}

/** The node back: the resent cancel has the adopted container removed, and the execution was cancelled once. */
async function removedOnReturn(jobId: string, executionId: string): Promise<void> {
  await startNode();
  await waitFor(
    async () => (await containerOf(executionId)) === undefined,
    30_000,
    () => "the cancelled execution's container to be removed",
  );
  const history = await alice.history(jobId, "event_type=execution");
  const cancels = history.filter((h) => h.ExecutionID === executionId && h.ExecutionState?.New === CANCELLED);
  expect(cancels).toHaveLength(1);
}

describe("a CancelExecution lost while the node's agent was down", () => {
  it("is sent again until the node, having adopted the container, stops it; recorded cancelled once", async () => {
    const { jobId, executionId } = await stoppedWhileAway();
    await removedOnReturn(jobId, executionId);
  }, 90_000);

  it("is sent again after the orchestrator restarts before the node is back", async () => {
    const { jobId, executionId } = await stoppedWhileAway();
    await orchestrator!.stop();
    orchestrator = undefined;
    orchestrator = await startOrchestrator(config, silentLogger);
    expect((await containerOf(executionId))?.State).toBe("running");
    await removedOnReturn(jobId, executionId);
  }, 120_000);
});
