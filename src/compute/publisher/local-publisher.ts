import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { PublishedResult, Publisher } from "./publisher.ts";
import type { StagedResult } from "./result-staging.ts";
import { writeTarGz } from "./tar-gz-directory.ts";

/** The archive's file name on the node: Bacalhau's `<executionId>.tar.gz`. */
export const resultArchiveName = (executionId: string): string => `${executionId}.tar.gz`;

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * Bacalhau's local publisher: the staged result as `<dir>/<executionId>.tar.gz` on the node, served from there
 * (ResultServer) until the node's retention rule removes it (ResultRetention). Written under a temporary name and
 * renamed, so that a half-written archive is never served.
 */
export class LocalPublisher implements Publisher {
  readonly type = "local" as const;

  constructor(readonly dir: string) {}

  pathOf(executionId: string): string {
    return join(this.dir, resultArchiveName(executionId));
  }

  async publish(executionId: string, staged: StagedResult): Promise<PublishedResult> {
    await mkdir(this.dir, { recursive: true });
    const target = this.pathOf(executionId);
    const partial = `${target}.partial`;
    await writeTarGz(staged.entries, partial);
    await rename(partial, target);
    const bytes = (await stat(target)).size;
    return {
      Type: "local",
      Params: { Name: resultArchiveName(executionId), Bytes: bytes, SHA256: await sha256Of(target) },
    };
  }

  async remove(executionId: string): Promise<void> {
    await rm(this.pathOf(executionId), { force: true });
    await rm(`${this.pathOf(executionId)}.partial`, { force: true });
  }
}
