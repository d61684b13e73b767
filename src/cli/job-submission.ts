import type { ApiClient } from "./api-client.ts";
import { ApiError } from "./api-client.ts";
import { computeStateName, shortId } from "./job-cells.ts";
import { followJob, jobEndText, PROGRESS_HEADER } from "./job-progress.ts";
import { formatSeconds, secondsFlag } from "./number-flag.ts";
import type { ExecutionJson } from "./job-shapes.ts";
import { UsageError } from "./usage-error.ts";
import { print, printError } from "./output-format.ts";

/** Bacalhau's RunTimeSettings that Shoal has: what to print once the job is submitted, and whether to wait. */
export interface RunSettings {
  readonly idOnly: boolean;
  readonly wait: boolean;
  readonly waitTimeoutSeconds: number;
}

export const RUN_SETTINGS_OPTIONS = {
  "id-only": { type: "boolean" },
  wait: { type: "boolean" },
  "wait-timeout": { type: "string" },
  "wait-timeout-secs": { type: "string" },
} as const;

/** Bacalhau's DefaultRunWaitSeconds. */
export const DEFAULT_WAIT_SECONDS = 600;

export const RUN_SETTINGS_HELP = `  --id-only                print only the job id
  --wait                   wait until the job ends (a service or daemon job: until it runs), its progress on
                           stderr; exits 1 when it Failed or was Stopped, or when the wait timed out
  --wait-timeout T         how long --wait waits: seconds or a duration (90s, 5m); default ${DEFAULT_WAIT_SECONDS}
                           (--wait-timeout-secs N, Bacalhau's name, works too)`;

export function runSettingsFrom(
  values: {
    readonly "id-only"?: boolean;
    readonly wait?: boolean;
    readonly "wait-timeout"?: string;
    readonly "wait-timeout-secs"?: string;
  },
  help: string,
): RunSettings {
  if (values["wait-timeout"] !== undefined && values["wait-timeout-secs"] !== undefined)
    throw new UsageError("give --wait-timeout or --wait-timeout-secs, not both", help);
  const timeout = values["wait-timeout"] ?? values["wait-timeout-secs"];
  const flag = values["wait-timeout"] !== undefined ? "--wait-timeout" : "--wait-timeout-secs";
  const seconds = timeout === undefined ? DEFAULT_WAIT_SECONDS : secondsFlag(timeout, flag, help);
  if (seconds < 1) throw new UsageError(`${flag} must be at least 1 second`, help);
  return { idOnly: values["id-only"] ?? false, wait: values.wait ?? false, waitTimeoutSeconds: seconds };
}

/** The last lines a failed execution wrote to stderr: often the why behind an exit code. */
const STDERR_TAIL_LINES = 20;

async function printFailedOutput(api: ApiClient, jobId: string): Promise<void> {
  const { Items } = await api.request<{ Items: ExecutionJson[] }>(
    "GET",
    `/api/v1/orchestrator/jobs/${encodeURIComponent(jobId)}/executions?limit=1000`,
  );
  for (const e of Items) {
    const stderr = e.RunOutput?.stderr.trimEnd() ?? "";
    if (computeStateName(e.ComputeState.StateType) !== "Failed" || stderr === "") continue;
    const lines = stderr.split("\n");
    const tail = lines.slice(-STDERR_TAIL_LINES);
    printError(
      `\nExecution ${shortId(e.ID)} wrote to stderr${lines.length > tail.length ? ` (its last ${tail.length} lines)` : ""}:\n${tail.join("\n")}`,
    );
  }
}

interface Problem {
  readonly path: string;
  readonly message: string;
}

const problemsOf = (e: ApiError): readonly Problem[] => {
  const details = (e.body as { Details?: { problems?: unknown } } | undefined)?.Details;
  const problems = details?.problems;
  return Array.isArray(problems) ? (problems as Problem[]).filter((p) => typeof p?.message === "string") : [];
};

/**
 * Submits a job (PUT /api/v1/orchestrator/jobs) and says what became of it, as Bacalhau's
 * `job run` and `docker run` do; the exit code is the command's. A job the server refuses as
 * invalid is printed with every problem the server named, one a line.
 */
export async function submitJob(api: ApiClient, job: unknown, settings: RunSettings): Promise<number> {
  let response: { JobID: string; Warnings: readonly string[] };
  try {
    response = await api.request("PUT", "/api/v1/orchestrator/jobs", { Job: job });
  } catch (e) {
    const problems = e instanceof ApiError && e.status === 400 ? problemsOf(e) : [];
    if (problems.length === 0) throw e;
    printError(
      `Error: the job provided is invalid (${problems.length} ${problems.length === 1 ? "problem" : "problems"}):`,
    );
    for (const p of problems) printError(`  ${p.path ? `${p.path}: ` : ""}${p.message}`);
    return 1;
  }
  const id = response.JobID;
  if (!settings.idOnly) for (const w of response.Warnings) printError(`Warning: ${w}`);
  if (settings.idOnly) print(id);
  else print(`Job successfully submitted. Job ID: ${id}`);
  if (!settings.wait) {
    if (!settings.idOnly)
      print(
        `\nTo follow it, run:\n\tshoal job describe ${id}\n\tshoal job history ${id}\n\tshoal job executions ${id}`,
      );
    return 0;
  }

  const quiet = settings.idOnly;
  if (!quiet) {
    printError("Checking job status... (Enter Ctrl+C to exit at any time, your job will continue running):\n");
    printError(PROGRESS_HEADER);
  }
  const stopWatching = () => {
    printError("\nProgress tracking canceled. The job is still running.");
    process.exit(130);
  };
  process.once("SIGINT", stopWatching);
  const { job: last, timedOut } = await followJob(api, id, {
    timeoutMs: settings.waitTimeoutSeconds * 1000,
    ...(quiet ? {} : { onEntry: printError }),
  }).finally(() => process.off("SIGINT", stopWatching));
  if (timedOut) {
    printError(
      `\nProgress tracking timed out after ${formatSeconds(settings.waitTimeoutSeconds)}. The job is still running (${last.State.StateType}).`,
    );
    return 1;
  }
  const state = last.State.StateType;
  if (state === "Failed" || state === "Stopped") {
    printError(`\nError: ${jobEndText(last)}`);
    if (state === "Failed" && !quiet) await printFailedOutput(api, id);
    return 1;
  }
  if (!quiet) {
    print(`\nJob ${id} ${state}.`);
    print(`\nTo get more details about the run, execute:\n\tshoal job describe ${id}`);
    print(`\nTo get more details about the run executions, execute:\n\tshoal job executions ${id}`);
  }
  return 0;
}
