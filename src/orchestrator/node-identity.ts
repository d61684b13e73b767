import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** NodeID from config, else one generated once (n-<uuid>, Bacalhau's puuid style) and kept in DataDir. */
export function resolveNodeIdentity(configured: string, dataDir: string, file = "node-id"): string {
  if (configured !== "") return configured;
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, file);
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const id = `n-${randomUUID()}`;
  writeFileSync(path, `${id}\n`);
  return id;
}
