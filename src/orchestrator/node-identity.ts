import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { nodeIdProblem } from "../events/catalog/node-id.ts";
import { StartupError } from "../errors/startup-error.ts";
import { writeFileAtomic } from "../fs/write-file-atomic.ts";

/**
 * NodeID from config, else one generated once (n-<uuid>, Bacalhau's puuid style) and kept in
 * DataDir. Every id is checked against the protocol's rule before it is used, so a bad id stops
 * the process before anything is written with it.
 */
export function resolveNodeIdentity(configured: string, dataDir: string, file = "node-id"): string {
  if (configured !== "") {
    const problem = nodeIdProblem(configured);
    if (problem !== undefined) throw new StartupError(`NodeID: ${problem}`);
    return configured;
  }
  const path = join(dataDir, file);
  if (existsSync(path)) {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (e) {
      throw new StartupError(`cannot read this node's id from ${path}: ${(e as Error).message}`);
    }
    const id = text.trim();
    const problem = nodeIdProblem(id);
    // Never replaced silently: a new id would make this node a stranger to its cluster.
    if (problem !== undefined) {
      throw new StartupError(
        `${path} holds this node's id, but ${problem}. Write the node's id into it, or set -c NodeID=<id>; ` +
          `deleting the file makes a new id, and the cluster will see a new node`,
      );
    }
    return id;
  }
  const id = `n-${randomUUID()}`;
  writeFileAtomic(path, `${id}\n`);
  return id;
}
