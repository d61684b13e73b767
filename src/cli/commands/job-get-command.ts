import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { parseByteSize } from "../../config/byte-size.ts";
import { API_OPTIONS, apiClientFrom } from "../api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "../config-flags.ts";
import { JOB_VERSIONS_OPTIONS, jobVersionsQuery } from "../job-version-flag.ts";
import { oneJobId } from "../one-job-id.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { downloadResults, RAW, type ResultSpec } from "../results/download-results.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal job get --help";

export const OPTIONS = {
  ...CONFIG_OPTIONS,
  ...API_OPTIONS,
  ...JOB_VERSIONS_OPTIONS,
  "output-dir": { type: "string", short: "o" },
  "max-size": { type: "string" },
  raw: { type: "boolean" },
  namespace: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

const DEFAULT_MAX_SIZE = "1GiB";

/** The directory results go into, which must exist (Bacalhau's "output dir does not exist"). */
async function outputDirectory(dir: string): Promise<string> {
  const path = resolve(dir);
  const found = await stat(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") throw new UsageError(`output dir does not exist: ${path}`, HELP_REF);
    throw new UsageError(`cannot use ${path} as the output dir: ${e.message}`, HELP_REF);
  });
  if (!found.isDirectory())
    throw new UsageError(`--output-dir ${path} is ${found.isFile() ? "a file" : "not a directory"}`, HELP_REF);
  return path;
}

/**
 * `shoal job get JOB_ID [--output-dir DIR] [--max-size SIZE] [--raw] [--version N | --all-versions]`: downloads the
 * job's published results (`GET /jobs/{id}/results`, then each one's URL) and unpacks them into DIR as `bacalhau job
 * get` lays them out (docs/jobs.md, Results).
 */
export async function jobGetCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal job get"));
    return 0;
  }
  const jobId = oneJobId(positionals, "get", HELP_REF);
  const maxSize = values["max-size"] ?? DEFAULT_MAX_SIZE;
  const maxBytes = parseByteSize(maxSize);
  if (maxBytes === undefined)
    throw new UsageError(`--max-size must be a size such as 500MiB or 2GB, got ${maxSize}`, HELP_REF);
  const q = new URLSearchParams();
  jobVersionsQuery(values, q, HELP_REF);
  if (values.namespace) q.set("namespace", values.namespace);
  const outputDir = await outputDirectory(values["output-dir"] ?? ".");
  const api = apiClientFrom(values);
  const query = q.size === 0 ? "" : `?${q}`;
  const { Items } = await api.request<{ Items: ResultSpec[] }>(
    "GET",
    `/api/v1/orchestrator/jobs/${encodeURIComponent(jobId)}/results${query}`,
  );
  if (Items.length === 0) {
    console.error(`Job ${jobId} has no results to download (its task has no Publisher, or nothing completed yet).`);
    return 0;
  }
  const raw = values.raw === true;
  await downloadResults(api, Items, outputDir, { maxBytes, raw });
  const where = raw ? `${outputDir}/${RAW}` : outputDir;
  console.error(`Downloaded ${Items.length} result${Items.length === 1 ? "" : "s"} to ${where}`);
  return 0;
}
