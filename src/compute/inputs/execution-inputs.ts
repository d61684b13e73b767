import { readdir, realpath, rm, stat } from "node:fs/promises";
import { join, posix } from "node:path";
import { absolutePathProblem } from "../../events/catalog/submitted-input-source.ts";
import { badRequest, type ShoalError, unavailable } from "../../errors/shoal-error.ts";
import type { BindMount, ExecutionSpec } from "../executor/executor.ts";
import { localPathRefusal, parseAllowedPath, type AllowedPath } from "./allowed-local-paths.ts";
import { downloadUrl, type DownloadLimits } from "./url-download.ts";

export interface ExecutionInputsOptions {
  /** Compute.AllowListedLocalPaths: patterns with an optional `:rw` or `:ro` suffix. */
  readonly allowListedLocalPaths: readonly string[];
  /** Where downloads go, one folder per execution, removed when it ends (under the node's DataDir). */
  readonly downloadDir: string;
  readonly limits: DownloadLimits;
}

/** What the inputs of an execution became on this node: mounts, or why they could not be had. */
export type PreparedInputs = { readonly mounts: readonly BindMount[] } | { readonly error: ShoalError };

/** Bacalhau's defaults: a download may take 5 minutes (InputSources.ReadTimeout); Shoal's: up to 1 GiB. */
export const DEFAULT_DOWNLOAD_LIMITS: DownloadLimits = { maxBytes: 1024 * 1024 * 1024, timeoutMs: 5 * 60_000 };

/**
 * A compute node's storage providers (Bacalhau's pkg/storage/local and url/urldownload): which
 * storage types it reads (StorageSources: localDirectory only with an allow-list, as Bacalhau's
 * IsInstalled), whether an execution's inputs may be read here at all (the allow-list, checked
 * before anything runs), and, before its container starts, each input as a bind mount: the
 * directory itself, read-only unless asked and allowed; a download, fetched into the node's data
 * directory, read-only at `<Target>/<file name>`.
 */
export class ExecutionInputs {
  readonly #allowed: readonly AllowedPath[];
  readonly storageSources: readonly string[];

  constructor(private readonly options: ExecutionInputsOptions) {
    this.#allowed = options.allowListedLocalPaths.map(parseAllowedPath);
    this.storageSources = this.#allowed.length > 0 ? ["localDirectory", "urlDownload"] : ["urlDownload"];
  }

  /** Why these inputs cannot be read on this node, before anything is run or held; undefined: they may. */
  refusal(spec: ExecutionSpec): ShoalError | undefined {
    const targets = new Set<string>();
    for (const input of spec.inputs ?? []) {
      const target = absolutePathProblem(input.target);
      if (target !== undefined)
        return badRequest(`execution ${spec.executionId}: input target ${JSON.stringify(input.target)} ${target}`);
      if (targets.has(input.target))
        return badRequest(`execution ${spec.executionId}: input source with target '${input.target}' already exists`);
      targets.add(input.target);
      if (input.type === "urlDownload") continue;
      const source = absolutePathProblem(input.sourcePath);
      if (source !== undefined)
        return badRequest(`execution ${spec.executionId}: source path ${JSON.stringify(input.sourcePath)} ${source}`);
      const refused = localPathRefusal(this.#allowed, input.sourcePath, input.readWrite);
      if (refused !== undefined) return badRequest(refused);
    }
    return undefined;
  }

  /**
   * Each input as a mount, in order. The allow-list is checked again against where a local path
   * really leads (a symbolic link inside an allowed directory may point out of it).
   */
  async prepare(spec: ExecutionSpec, signal: AbortSignal): Promise<PreparedInputs> {
    const refused = this.refusal(spec);
    if (refused !== undefined) return { error: refused };
    const mounts: BindMount[] = [];
    const inputs = spec.inputs ?? [];
    for (const [i, input] of inputs.entries()) {
      if (input.type === "localDirectory") {
        const found = await this.#local(input.sourcePath, input.readWrite);
        if ("error" in found) return found;
        mounts.push({ source: found.path, target: input.target, readOnly: !input.readWrite });
        continue;
      }
      try {
        const dir = join(this.#executionDir(spec.executionId), String(i));
        const file = await downloadUrl(input.url, dir, this.options.limits, signal);
        mounts.push({ source: file.path, target: posix.join(input.target, file.name), readOnly: true });
      } catch (e) {
        await this.cleanup(spec.executionId);
        return { error: e as ShoalError };
      }
    }
    return { mounts };
  }

  /** The execution's downloads, once it ended (a local directory is the node's own: never touched). */
  async cleanup(executionId: string): Promise<void> {
    await rm(this.#executionDir(executionId), { recursive: true, force: true });
  }

  /** After a restart: the downloads of every execution but `running` (which still read theirs). */
  async prune(running: ReadonlySet<string>): Promise<void> {
    let found: string[];
    try {
      found = await readdir(this.options.downloadDir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
      throw e;
    }
    for (const id of found) if (!running.has(id)) await this.cleanup(id);
  }

  #executionDir(executionId: string): string {
    return join(this.options.downloadDir, executionId);
  }

  async #local(path: string, readWrite: boolean): Promise<{ path: string } | { error: ShoalError }> {
    let real: string;
    try {
      real = await realpath(path);
      await stat(real);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { error: badRequest(`volume ${path} does not exist and creation is not allowed`) };
      return { error: unavailable(`could not access volume at ${path}: ${(e as Error).message}`) };
    }
    const refused = real === path ? undefined : localPathRefusal(this.#allowed, real, readWrite);
    return refused === undefined ? { path: real } : { error: badRequest(`${refused}: ${path} leads to ${real}`) };
  }
}
