import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { EXECUTION_LABEL } from "../../src/compute/executor/docker-labels.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
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
 * and the execution is recorded cancelled once. Real nats-server, SQLite and Docker.
 */
const KEY = "alice-key-lost-cancel-0123456789abcd";
const USERS: AuthUser[] = [{ Alias: "alice", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] }];
const RUNNING = 6;
const CANCELLED = 11;
const nodeId = `lost-cancel-${randomUUID().slice(0, 8)}`;
const dataDir = tempDir("shoal-lost-cancel-node-");
let orchestrator: RunningOrchestrator | undefined;
const agents: ComputeAgent[] = [];
let image = "";

const alice = new JobApiClient(
  () => orchestrator?.apiUrl ?? "",
  () => KEY,
);

/** The node's agent over its one DataDir (and container owner id), started and joined. */
async function startNode(): Promise<ComputeAgent> {
  const agent = testAgent({
    nodeId,
    dataDir,
    orchestrators: [orchestrator!.natsUrl],
    token: orchestrator!.joinToken.token,
    executor: ownedDockerExecutor(nodeId, dataDir),
  });
  agents.push(agent);
  await startJoined(agent, orchestrator!.manager, nodeId);
  return agent;
}

const containerOf = async (executionId: string) =>
  (await containersOf(nodeId)).find((c) => c.Labels[EXECUTION_LABEL] === executionId);

beforeAll(async () => {
  image = await dockerTestImage();
  orchestrator = await startOrchestrator(
    await ownNatsOrchestratorConfig("shoal-lost-cancel-", { "API.Auth.Users": USERS }),
    silentLogger,
  );
}, 120_000);

afterAll(async () => {
  for (const agent of agents) await agent.stop();
  await orchestrator?.stop();
  await removeContainersOf(nodeId);
});

describe("a CancelExecution lost while the node's agent was down", () => {
  it("is sent again until the node, having adopted the container, stops it; recorded cancelled once", async () => {
    const first = await startNode();
    const spec = shellJob(image, "sleep 3600", { type: "daemon", resources: { CPU: "100m", Memory: "16Mb" } });
    const jobId = await alice.submit(spec);
    const [execution] = await untilExecutions(alice, jobId, firstExecutionIn(RUNNING), "its execution running");
    const executionId = execution!.ID as string;
    expect((await containerOf(executionId))?.State).toBe("running");

    // The agent goes away, its container running on; the stop is stored and its cancel published to nobody.
    await first.stop();
    const stopped = await alice.stop(jobId, "stopped while its node was away");
    expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
    await untilExecutions(alice, jobId, firstExecutionIn(CANCELLED), "its execution cancelled");
    expect((await containerOf(executionId))?.State).toBe("running");

    await startNode();
    await waitFor(
      async () => (await containerOf(executionId)) === undefined,
      30_000,
      () => "the cancelled execution's container to be removed",
    );
    const history = await alice.history(jobId, "event_type=execution");
    const cancels = history.filter((h) => h.ExecutionID === executionId && h.ExecutionState?.New === CANCELLED);
    expect(cancels).toHaveLength(1);
  }, 90_000);
});
