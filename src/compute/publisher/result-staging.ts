import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { badRequest } from "../../errors/shoal-error.ts";
import { formatExactBytes } from "../../config/byte-size.ts";
import type { RunOutput } from "../executor/executor.ts";
import { directoryEntries, type DirectoryEntry } from "./tar-gz-directory.ts";

/** A directory of the node mounted into the container at a result path. */
export interface OutputMount {
  readonly hostPath: string;
  readonly containerPath: string;
}

/** An execution's result as staged on the node: its directory, what is in it, and how many bytes that is. */
export interface StagedResult {
  readonly dir: string;
  readonly entries: readonly DirectoryEntry[];
  readonly bytes: number;
}

/**
 * The directories an execution writes its results into: one per result path, under
 * `<root>/<executionId>/<name>`, made before its container starts and mounted writable. When it
 * ends, its stdout, stderr and exitCode are written beside them (Bacalhau's results layout), and
 * the whole must stay within `maxBytes` (Compute.Publishers.MaxResultBytes).
 */
export class ResultStaging {
  constructor(
    private readonly root: string,
    private readonly maxBytes: number,
  ) {}

  dirOf(executionId: string): string {
    return join(this.root, executionId);
  }

  async prepare(executionId: string, paths: readonly { Name: string; Path: string }[]): Promise<OutputMount[]> {
    const mounts: OutputMount[] = [];
    for (const p of paths) {
      const hostPath = join(this.dirOf(executionId), p.Name);
      await mkdir(hostPath, { recursive: true });
      // The image's user is not known here: any user in the container may write its results.
      await chmod(hostPath, 0o777);
      mounts.push({ hostPath, containerPath: p.Path });
    }
    return mounts;
  }

  /** Adds the command's output and lists the result; refuses one larger than the node publishes. */
  async finish(executionId: string, output: RunOutput): Promise<StagedResult> {
    const dir = this.dirOf(executionId);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "stdout"), output.STDOUT);
    await writeFile(join(dir, "stderr"), output.STDERR);
    await writeFile(join(dir, "exitCode"), String(output.ExitCode));
    const entries = await directoryEntries(dir);
    const bytes = entries.reduce((sum, e) => sum + e.size, 0);
    if (bytes > this.maxBytes)
      throw badRequest(
        `execution ${executionId} wrote ${bytes} bytes of results; this node publishes at most ` +
          `${formatExactBytes(this.maxBytes)} per execution (Compute.Publishers.MaxResultBytes)`,
      );
    return { dir, entries, bytes };
  }

  async remove(executionId: string): Promise<void> {
    await rm(this.dirOf(executionId), { recursive: true, force: true });
  }
}
