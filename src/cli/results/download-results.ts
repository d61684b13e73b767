import { createHash } from "node:crypto";
import { once } from "node:events";
import { createReadStream, createWriteStream, rmSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { ApiClient } from "../api-client.ts";
import { openStreamingGet } from "../ndjson-request.ts";
import { asDownloadError, DownloadError } from "./download-error.ts";
import { mergeResult } from "./merge-result.ts";
import { moveIntoPlace } from "./move-into-place.ts";
import { unpackTarGz } from "./unpack-tar-gz.ts";

/** One of `GET /jobs/{id}/results`' Items: Bacalhau's SpecConfig. */
export interface ResultSpec {
  readonly Type: string;
  readonly Params: Readonly<Record<string, string | number>>;
}

export interface DownloadOptions {
  /** The most one result may unpack to. */
  readonly maxBytes: number;
  /** Bacalhau's --raw: each result's archive kept as it is, in `raw/<executionId>.tar.gz`, nothing merged. */
  readonly raw: boolean;
}

/** Bacalhau's DownloadRawFolderName. */
export const RAW = "raw";
/**
 * Where a download is assembled: hidden, inside the output directory (so that moving it into place renames on one
 * file system), removed at the end whatever happened.
 */
export const STAGING_PREFIX = ".shoal-job-get-";

/** An execution id as a file name; anything else (a server's mistake) is not let near a path. */
const fileName = (result: ResultSpec, i: number): string => {
  const id = String(result.Params.ExecutionID ?? "");
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/.test(id) ? id : `result-${i}`;
};

/** Downloads one result into `file`, checking its size and SHA256 against what its node published. */
async function download(api: ApiClient, result: ResultSpec, file: string): Promise<void> {
  const url = new URL(String(result.Params.URL));
  const expected = Number(result.Params.Bytes);
  // The API the CLI talks to serves it, whatever host name the server saw.
  const response = await openStreamingGet(api, url.pathname, { accept: "application/gzip" }, undefined, true);
  const hash = createHash("sha256");
  let bytes = 0;
  const out = createWriteStream(file, { mode: 0o600 });
  // A write that fails (no space left) errors the stream once, and it then takes nothing more: checked at each step.
  let failure: Error | undefined;
  out.on("error", (e) => (failure = e));
  const closed = new Promise<void>((resolve) => out.once("close", () => resolve()));
  try {
    for await (const chunk of response) {
      const data = chunk as Buffer;
      bytes += data.length;
      if (bytes > expected)
        throw new DownloadError(`the result ${url.pathname} is larger than the ${expected} bytes its node published`);
      hash.update(data);
      if (failure) throw failure;
      if (!out.write(data)) await Promise.race([once(out, "drain"), closed]);
    }
  } catch (e) {
    // The API cut the answer off (the node stopped answering half-way, the connection dropped).
    if (e instanceof DownloadError || (e as { syscall?: unknown }).syscall !== undefined) throw e;
    throw new DownloadError(`the result ${url.pathname} was cut off after ${bytes} bytes: ${(e as Error).message}`);
  } finally {
    out.end();
    await closed;
  }
  if (failure) throw failure;
  if (bytes !== expected)
    throw new DownloadError(`the result ${url.pathname} was cut short: ${bytes} of ${expected} bytes arrived`);
  const sha = hash.digest("hex");
  if (result.Params.SHA256 !== undefined && sha !== result.Params.SHA256)
    throw new DownloadError(`the result ${url.pathname} is not what its node published (SHA256 ${sha})`);
}

/**
 * `bacalhau job get`'s download (pkg/downloader), all or nothing: each result downloaded and checked, then unpacked
 * (nothing outside the directory, at most `maxBytes` each) and merged with the others (mergeResult), or with `raw`
 * kept as its archive under `raw/`; the whole is assembled in a hidden directory inside `outputDir` and moved into
 * place only when complete (moveIntoPlace). A failure, or an interrupt, leaves `outputDir` as it was. `outputDir`
 * must exist.
 */
export async function downloadResults(
  api: ApiClient,
  results: readonly ResultSpec[],
  outputDir: string,
  options: DownloadOptions,
): Promise<void> {
  const staging = await mkdtemp(join(outputDir, STAGING_PREFIX)).catch((e: unknown) => {
    throw asDownloadError(e, outputDir);
  });
  // A signal ends the process without unwinding: the staging goes with it.
  const interrupted = (signal: NodeJS.Signals) => {
    rmSync(staging, { recursive: true, force: true });
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", interrupted).once("SIGTERM", interrupted);
  try {
    const tree = join(staging, "tree");
    await mkdir(join(tree, options.raw ? RAW : ""), { recursive: true });
    for (const [i, result] of results.entries()) {
      const name = fileName(result, i);
      if (options.raw) {
        await download(api, result, join(tree, RAW, `${name}.tar.gz`));
        continue;
      }
      const archive = join(staging, `${name}.tar.gz`);
      await download(api, result, archive);
      const unpacked = join(staging, "unpacked", name);
      await mkdir(unpacked, { recursive: true });
      await unpackTarGz(createReadStream(archive), unpacked, options.maxBytes);
      await mergeResult(unpacked, tree, results.length > 1);
    }
    await moveIntoPlace(tree, outputDir);
  } catch (e) {
    throw asDownloadError(e, outputDir);
  } finally {
    process.off("SIGINT", interrupted).off("SIGTERM", interrupted);
    await rm(staging, { recursive: true, force: true });
  }
}
