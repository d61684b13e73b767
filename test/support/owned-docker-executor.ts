import Docker from "dockerode";
import { loadOrCreateContainerOwner } from "../../src/compute/container-owner.ts";
import { DockerExecutor, type DockerExecutorOptions } from "../../src/compute/executor/docker-executor.ts";
import { silentLogger } from "./fixtures.ts";

const MIB = 1024 * 1024;

/**
 * A Docker executor of `nodeId` as a node with DataDir `dataDir` has it: its containers carry that DataDir's owner id.
 * 2 CPUs and 512 MiB unless `options` say otherwise; no stop grace.
 */
export function ownedDockerExecutor(
  nodeId: string,
  dataDir: string,
  options: Partial<DockerExecutorOptions> = {},
): DockerExecutor {
  return new DockerExecutor({
    nodeId,
    owner: loadOrCreateContainerOwner(dataDir, nodeId),
    capacity: { cpuMillis: 2000, memoryBytes: 512 * MIB },
    logger: silentLogger,
    docker: new Docker(),
    stopGraceSeconds: 0,
    ...options,
  });
}
