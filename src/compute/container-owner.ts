import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../fs/write-file-atomic.ts";

/**
 * An id of this node's DataDir, created once and kept in `<dataDir>/<nodeId>.owner`: its containers carry it, so
 * that nodes with the same id on one engine (every devstack names its nodes node-1…node-N) tell theirs apart.
 * Not a secret: it only says whose a container is.
 */
export function loadOrCreateContainerOwner(dataDir: string, nodeId: string): string {
  const file = join(dataDir, `${nodeId}.owner`);
  if (existsSync(file)) {
    const kept = readFileSync(file, "utf8").trim();
    if (/^[A-Za-z0-9-]{1,64}$/.test(kept)) return kept;
    throw new Error(`${file} does not hold a container owner id; remove it to create a new one`);
  }
  mkdirSync(dataDir, { recursive: true });
  const owner = randomUUID();
  writeFileAtomic(file, `${owner}\n`, 0o644);
  return owner;
}
