import Docker from "dockerode";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";

const docker = new Docker();

/** The Docker containers, running or not, that a node's executor made. */
export const containersOf = (nodeId: string) =>
  docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } });

/** Removes, by force, every container these nodes' executors left behind. */
export async function removeContainersOf(...nodeIds: readonly string[]): Promise<void> {
  for (const nodeId of nodeIds)
    for (const c of await containersOf(nodeId)) await docker.getContainer(c.Id).remove({ force: true });
}
