import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { appendFile, mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { RESULT_OUTPUT_FILES } from "../../events/catalog/publisher-types.ts";
import type { ApiClient } from "../api-client.ts";
import { openStreamingGet } from "../ndjson-request.ts";
import { unpackTarGz } from "./unpack-tar-gz.ts";

/** One of `GET /jobs/{id}/results`' Items: Bacalhau's SpecConfig. */
export interface ResultSpec {
  readonly Type: string;
  readonly Params: Readonly<Record<string, string | number>>;
}

/** Bacalhau's DownloadRawFolderName: where archives are kept while they are unpacked. */
const RAW = "raw";

/** Downloads one result into `file`, checking its size and SHA256 against what its node published. */
async function download(api: ApiClient, result: ResultSpec, file: string): Promise<void> {
  const url = new URL(String(result.Params.URL));
  const expected = Number(result.Params.Bytes);
  // The API the CLI talks to serves it, whatever host name the server saw.
  const response = await openStreamingGet(api, url.pathname, { accept: "application/gzip" }, undefined, true);
  const hash = createHash("sha256");
  let bytes = 0;
  const out = createWriteStream(file, { mode: 0o600 });
  try {
    for await (const chunk of response) {
      const data = chunk as Buffer;
      bytes += data.length;
      if (bytes > expected)
        throw new Error(`the result ${url.pathname} is larger than the ${expected} bytes its node published`);
      hash.update(data);
      if (!out.write(data)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
    }
  } finally {
    await new Promise<void>((resolve) => out.end(() => resolve()));
  }
  if (bytes !== expected)
    throw new Error(`the result ${url.pathname} was cut short: ${bytes} of ${expected} bytes arrived`);
  const sha = hash.digest("hex");
  if (result.Params.SHA256 !== undefined && sha !== result.Params.SHA256)
    throw new Error(`the result ${url.pathname} is not what its node published (SHA256 ${sha})`);
}

/**
 * Moves what `from` holds into `to` as Bacalhau's downloader does: directories merged, a file
 * that is already there refused, but stdout, stderr and exitCode appended when there are several
 * results.
 */
async function moveInto(from: string, to: string, append: boolean, under = ""): Promise<void> {
  for (const entry of await readdir(join(from, under), { withFileTypes: true })) {
    const relative = under === "" ? entry.name : join(under, entry.name);
    const target = join(to, relative);
    if (entry.isDirectory()) {
      await mkdir(target, { recursive: true });
      await moveInto(from, to, append, relative);
      continue;
    }
    const output = under === "" && (RESULT_OUTPUT_FILES as readonly string[]).includes(entry.name);
    if (append && output) {
      for await (const chunk of createReadStream(join(from, relative))) await appendFile(target, chunk as Buffer);
      continue;
    }
    if (existsSync(target))
      throw new Error(`cannot merge results as output already exists: ${target}. Use another --output-dir`);
    await rename(join(from, relative), target);
  }
}

/**
 * `bacalhau job get`'s download (pkg/downloader): each result into `<outputDir>/raw`, checked,
 * unpacked (nothing outside the directory, at most `maxBytes` each), merged into `outputDir`, and
 * `raw` removed. `outputDir` must exist.
 */
export async function downloadResults(
  api: ApiClient,
  results: readonly ResultSpec[],
  outputDir: string,
  maxBytes: number,
): Promise<void> {
  if (!existsSync(outputDir) || !(await stat(outputDir)).isDirectory())
    throw new Error(`output dir does not exist: ${outputDir}`);
  const raw = join(outputDir, RAW);
  await mkdir(raw, { recursive: true });
  try {
    for (const [i, result] of results.entries()) {
      const name = String(result.Params.ExecutionID ?? `result-${i}`);
      const archive = join(raw, `${name}.tar.gz`);
      await download(api, result, archive);
      const unpacked = join(raw, name);
      await mkdir(unpacked, { recursive: true });
      await unpackTarGz(createReadStream(archive), unpacked, maxBytes);
      await moveInto(unpacked, outputDir, results.length > 1);
    }
  } finally {
    await rm(raw, { recursive: true, force: true });
  }
}
