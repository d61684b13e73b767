import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { parseByteSize } from "../../config/byte-size.ts";
import { API_OPTIONS, apiClientFrom } from "../api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "../config-flags.ts";
import { oneJobId } from "../one-job-id.ts";
import { downloadResults, type ResultSpec } from "../results/download-results.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

export const OPTIONS = {
  ...CONFIG_OPTIONS,
  ...API_OPTIONS,
  "output-dir": { type: "string", short: "o" },
  "max-size": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

const DEFAULT_MAX_SIZE = "1GiB";

/**
 * `shoal job get JOB_ID [--output-dir DIR] [--max-size SIZE]`: downloads the job's published
 * results (`GET /jobs/{id}/results`, then each one's URL) and unpacks them into DIR as `bacalhau
 * job get` lays them out (docs/jobs.md, Results).
 */
export async function jobGetCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help) {
    console.log(commandHelp("shoal job get"));
    return 0;
  }
  const jobId = oneJobId(positionals, "get");
  const maxSize = values["max-size"] ?? DEFAULT_MAX_SIZE;
  const maxBytes = parseByteSize(maxSize);
  if (maxBytes === undefined) throw new UsageError(`--max-size must be a size such as 500MiB or 2GB, got ${maxSize}`);
  const outputDir = resolve(values["output-dir"] ?? ".");
  const api = apiClientFrom(values);
  const { Items } = await api.request<{ Items: ResultSpec[] }>(
    "GET",
    `/api/v1/orchestrator/jobs/${encodeURIComponent(jobId)}/results`,
  );
  if (Items.length === 0) {
    console.error(`Job ${jobId} has no results to download (its task has no Publisher, or nothing completed yet).`);
    return 0;
  }
  await downloadResults(api, Items, outputDir, maxBytes);
  console.error(`Downloaded ${Items.length} result${Items.length === 1 ? "" : "s"} to ${outputDir}`);
  return 0;
}
