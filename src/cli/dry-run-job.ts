import { ApiError, type ApiClient } from "./api-client.ts";
import { RUN_EXIT, printRefusal } from "./job-submission.ts";
import { print, printData, printError } from "./output-format.ts";

/**
 * `job run --dry-run`, as Bacalhau's: PUT /jobs/diff compares the job with the job of its name and the change is
 * printed (`- Path: old` / `+ Path: new`, a line each), or `No diff detected.`; nothing is submitted. A job without a
 * name, or with a name no job has, has nothing to compare with: as Bacalhau, the error is said and the job is
 * printed as read (offline mode). An invalid job is refused with its problems, as `job run` refuses it (exit 1).
 */
export async function dryRunJob(api: ApiClient, job: unknown): Promise<number> {
  let answer: { Diff: string; Warnings: readonly string[] };
  try {
    answer = await api.request("PUT", "/api/v1/orchestrator/jobs/diff", { Job: job });
  } catch (e) {
    if (!nothingToCompare(e)) {
      if (printRefusal(e)) return RUN_EXIT.failed;
      throw e;
    }
    printError(`Error: failed to fetch Job spec: ${e.message}`);
    printError("Warning: falling back to offline mode...");
    await printData("yaml", job);
    return RUN_EXIT.completed;
  }
  for (const w of answer.Warnings) printError(`Warning: ${w}`);
  if (answer.Diff === "") printError("Warning: No diff detected.");
  else print(answer.Diff);
  return RUN_EXIT.completed;
}

/** No job of the name (404), or no name (Bacalhau's "name is missing"): the dry run has nothing to diff against. */
const nothingToCompare = (e: unknown): e is ApiError =>
  e instanceof ApiError &&
  (e.status === 404 ||
    (e.status === 400 &&
      (e.body as { Message?: unknown } | undefined)?.Message === "invalid job spec: name is missing"));
