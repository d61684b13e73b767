import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExecutionRunner } from "../../src/compute/execution-runner.ts";
import type { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { EXECUTION_LABEL } from "../../src/compute/executor/docker-labels.ts";
import { KnownExecutions } from "../../src/compute/known-executions.ts";
import { encodeMessage } from "../../src/transport/codec.ts";
import { cancelExecutionMessage } from "../../src/transport/work-message-builders.ts";
import type { ExecutionReport } from "../../src/transport/work-messages.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { containersOf, removeContainersOf } from "../support/node-containers.ts";
import { ownedDockerExecutor } from "../support/owned-docker-executor.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * A restarted compute node told to cancel an execution before its reconcile has adopted that execution's container
 * (an orchestrator that stopped it while the node was away, sending the cancel as soon as the node listens): the
 * container is stopped once adopted, and its end reported cancelled, rather than answered "does not run here" and
 * left running for good. Real Docker; the orchestrator is the runner's report sink.
 */
const docker = new Docker();
const MIB = 1024 * 1024;
const nodeId = `cba-${randomUUID().slice(0, 8)}`;
let image = "";
const executors: DockerExecutor[] = [];
const runners: ExecutionRunner[] = [];

function executorIn(dataDir: string): DockerExecutor {
  const ex = ownedDockerExecutor(nodeId, dataDir);
  executors.push(ex);
  return ex;
}

/** A node's runner over its DataDir, its reports kept in `sent` and answered Accepted. */
function runnerIn(dataDir: string, sent: ExecutionReport[]): ExecutionRunner {
  const runner = new ExecutionRunner({
    nodeId,
    executor: executorIn(dataDir),
    known: new KnownExecutions(dataDir, nodeId),
    send: (report) => {
      sent.push(report);
      return Promise.resolve({ Accepted: true });
    },
    logger: silentLogger,
  });
  runners.push(runner);
  return runner;
}

/** A node that ran `executionId` in a container and went away, the container running on. */
async function nodeAwayWithRunningContainer(dataDir: string, executionId: string): Promise<void> {
  const before = executorIn(dataDir);
  new KnownExecutions(dataDir, nodeId).set(executionId, { jobId: `j-${randomUUID()}` });
  const running = await before.run({
    executionId,
    image,
    entrypoint: ["sleep", "60"],
    resources: { cpuMillis: 100, memoryBytes: 16 * MIB },
  });
  expect(await running.started).toBe(true);
  await before.close();
}

const containerOf = async (executionId: string) =>
  (await containersOf(nodeId)).find((c) => c.Labels[EXECUTION_LABEL] === executionId);

beforeAll(async () => {
  image = await dockerTestImage();
}, 120_000);

afterAll(async () => {
  for (const r of runners) r.stop();
  for (const ex of executors) await ex.close();
  await removeContainersOf(nodeId);
});

describe("a cancel that reaches a restarted node before its reconcile", () => {
  it("stops the container once adopted and reports it cancelled; no later start adopts it again", async () => {
    const dataDir = tempDir("shoal-cancel-before-adoption-");
    const executionId = `e-${randomUUID()}`;
    await nodeAwayWithRunningContainer(dataDir, executionId);
    expect((await containerOf(executionId))?.State).toBe("running");

    const sent: ExecutionReport[] = [];
    const runner = runnerIn(dataDir, sent);
    const cancel = cancelExecutionMessage(nodeId, executionId, "stopped by a rolling update", randomUUID());
    runner.handle(encodeMessage(cancel));
    await runner.reconcile();

    await waitFor(
      async () => (await containerOf(executionId)) === undefined,
      15_000,
      () => "the cancelled execution's container to be removed",
    );
    await waitFor(
      () => new KnownExecutions(dataDir, nodeId).get(executionId)?.delivered === true,
      5000,
      () => "its end delivered",
    );
    const ends = sent.filter((r) => r.ExecutionID === executionId);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ Type: "ExecutionFailed", Cause: "cancelled" });
    expect(ends[0]?.Type === "ExecutionFailed" && ends[0].Reason).toMatch(/was cancelled: stopped by a rolling update/);

    // The node's next start knows it ended: nothing is adopted, nothing reported again.
    const again: ExecutionReport[] = [];
    await runnerIn(dataDir, again).reconcile();
    expect(again).toEqual([]);
  }, 60_000);

  it("a cancelled execution whose container is gone by the reconcile is reported cancelled, not lost", async () => {
    const dataDir = tempDir("shoal-cancel-before-adoption-gone-");
    const executionId = `e-${randomUUID()}`;
    await nodeAwayWithRunningContainer(dataDir, executionId);
    await docker.getContainer((await containerOf(executionId))!.Id).remove({ force: true });

    const sent: ExecutionReport[] = [];
    const runner = runnerIn(dataDir, sent);
    runner.handle(encodeMessage(cancelExecutionMessage(nodeId, executionId, "stopped", randomUUID())));
    await runner.reconcile();
    await waitFor(
      () => sent.some((r) => r.ExecutionID === executionId),
      5000,
      () => "its end reported",
    );
    expect(sent).toMatchObject([{ Type: "ExecutionFailed", Cause: "cancelled" }]);
  }, 60_000);
});
