import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { EXECUTION_LABEL, NODE_LABEL, OWNER_LABEL } from "../../src/compute/executor/docker-labels.ts";
import type { ExecutionSpec } from "../../src/compute/executor/executor.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { containersOf, removeContainersOf } from "../support/node-containers.ts";
import { ownedDockerExecutor } from "../support/owned-docker-executor.ts";

/**
 * Two compute nodes with the same id in different DataDirs on one Docker engine (two devstacks, tests in parallel):
 * each touches only the containers its own DataDir's node made, and one from before containers carried their owner
 * only when its own record says it ran it.
 */
const docker = new Docker();
const MIB = 1024 * 1024;
const nodeId = `same-${randomUUID().slice(0, 8)}`;
let image = "";
let cluster: DockerNodeOrchestrator | undefined;
const executors: DockerExecutor[] = [];

function executorIn(dataDir: string): DockerExecutor {
  const ex = ownedDockerExecutor(nodeId, dataDir);
  executors.push(ex);
  return ex;
}

const sleeper = (): ExecutionSpec => ({
  executionId: `e-${randomUUID()}`,
  image,
  entrypoint: ["sleep", "30"],
  resources: { cpuMillis: 100, memoryBytes: 16 * MIB },
});

/** A running container as a node made it before containers carried their owner. */
async function ownerlessContainer(executionId: string): Promise<string> {
  const container = await docker.createContainer({
    name: `shoal-${executionId}`,
    Image: image,
    Cmd: ["sleep", "30"],
    Labels: { [NODE_LABEL]: nodeId, [EXECUTION_LABEL]: executionId },
    HostConfig: { NetworkMode: "none" },
  });
  await container.start();
  return container.id;
}

const isRunning = async (containerId: string) => (await docker.getContainer(containerId).inspect()).State.Running;

beforeAll(async () => {
  image = await dockerTestImage();
}, 120_000);

afterAll(async () => {
  for (const ex of executors) await ex.close();
  await cluster?.stop();
  await removeContainersOf(nodeId);
});

describe("nodes with the same id on one engine", () => {
  it("a node's start leaves the running containers of another DataDir's node with its id alone", async () => {
    const first = executorIn(tempDir("shoal-same-first-"));
    const running = await first.run(sleeper());
    expect(await running.started).toBe(true);
    const legacyId = `e-${randomUUID()}`;
    const legacy = await ownerlessContainer(legacyId);

    // The second node starts (reconciling the engine against its own, empty, record) and joins its own cluster.
    cluster = await startDockerNodeOrchestrator("shoal-same-node-id-", [], nodeId);

    const containers = await containersOf(nodeId);
    const firstContainer = containers.find((c) => c.Labels[EXECUTION_LABEL] === running.executionId);
    expect(firstContainer?.State).toBe("running");
    expect(firstContainer?.Labels[OWNER_LABEL]).toBeDefined();
    expect(await isRunning(legacy)).toBe(true);
    // The first node still runs its execution, and it ends as its own, not lost to the engine.
    expect(first.running()).toEqual([running.executionId]);
    expect((await first.cancel(running.executionId)).state).toBe("Cancelled");
    await docker.getContainer(legacy).remove({ force: true });
  }, 120_000);

  it(
    "a container without an owner is adopted by the node whose record says it ran it, and left by the " + "others",
    async () => {
      const executionId = `e-${randomUUID()}`;
      const containerId = await ownerlessContainer(executionId);

      const stranger = await executorIn(tempDir("shoal-same-stranger-")).reconcile([]);
      expect(stranger).toMatchObject({ adopted: [], removed: [], missing: [], failed: [] });
      expect(await isRunning(containerId)).toBe(true);

      const ownerDir = tempDir("shoal-same-owner-");
      const report = await executorIn(ownerDir).reconcile([executionId]);
      expect(report.adopted.map((a) => [a.execution.executionId, a.containerId])).toEqual([[executionId, containerId]]);
      // A second reconcile of a node of the same DataDir (its restart) finds it again.
      const again = await executorIn(ownerDir).reconcile([executionId]);
      expect(again.adopted.map((a) => a.execution.executionId)).toEqual([executionId]);
    },
    60_000,
  );
});
