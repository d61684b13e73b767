import { randomUUID } from "node:crypto";
import type { ApiClient } from "./api-client.ts";
import { ApiError, mayPass } from "./api-client.ts";
import { computeStateName, shortId, TERMINAL_JOB_STATES } from "./job-cells.ts";
import { executionRefusals } from "./execution-refusals.ts";
import { followJob, jobEndText } from "./job-progress.ts";
import { progressDisplay, type ProgressDisplay } from "./job-progress-display.ts";
import type { ExecutionJson, JobJson } from "./job-shapes.ts";
import { formatSeconds, secondsFlag } from "./number-flag.ts";
import { print, printError } from "./output-format.ts";
import { printJobLogs } from "./print-job-logs.ts";
import { UsageError } from "./usage-error.ts";

/**
 * Bacalhau's RunTimeSettings that Shoal has: what to print once the job is submitted, and whether to wait; and its
 * `--force`: a named job submitted again unchanged becomes its next version instead of being refused.
 */
export interface RunSettings {
  readonly force: boolean;
  readonly idOnly: boolean;
  readonly wait: boolean;
  readonly follow: boolean;
  readonly waitTimeoutSeconds: number;
}

/** `--wait` is not among them: it takes a value (`--wait=false`), so takeBooleanFlag reads it first. */
export const RUN_SETTINGS_OPTIONS = {
  "id-only": { type: "boolean" },
  follow: { type: "boolean", short: "f" },
  "wait-timeout": { type: "string" },
  "wait-timeout-secs": { type: "string" },
  force: { type: "boolean" },
} as const;

/** Bacalhau's DefaultRunWaitSeconds. */
export const DEFAULT_WAIT_SECONDS = 600;

/** How `job run` and `docker run` say how the job ended (2: a usage error, as everywhere); its help says so. */
export const RUN_EXIT = { completed: 0, failed: 1, stopped: 3, stillGoing: 4, interrupted: 130 } as const;

export function runSettingsFrom(
  values: {
    readonly "id-only"?: boolean;
    readonly follow?: boolean;
    readonly "wait-timeout"?: string;
    readonly "wait-timeout-secs"?: string;
    readonly force?: boolean;
  },
  wait: boolean | undefined,
  help: string,
): RunSettings {
  if (values["wait-timeout"] !== undefined && values["wait-timeout-secs"] !== undefined)
    throw new UsageError("give --wait-timeout or --wait-timeout-secs, not both", help);
  const timeout = values["wait-timeout"] ?? values["wait-timeout-secs"];
  const flag = values["wait-timeout"] !== undefined ? "--wait-timeout" : "--wait-timeout-secs";
  const seconds = timeout === undefined ? DEFAULT_WAIT_SECONDS : secondsFlag(timeout, flag, help);
  if (seconds < 1) throw new UsageError(`${flag} must be at least 1 second`, help);
  const follow = values.follow ?? false;
  if (follow && wait === false)
    throw new UsageError("--follow prints the output until the job ends: it cannot be given with --wait=false", help);
  return {
    force: values.force ?? false,
    idOnly: values["id-only"] ?? false,
    wait: wait ?? true,
    follow,
    waitTimeoutSeconds: seconds,
  };
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

export interface Problem {
  readonly path: string;
  readonly message: string;
}

const problemsOf = (e: ApiError): readonly Problem[] => {
  const details = (e.body as { Details?: { problems?: unknown } } | undefined)?.Details;
  const problems = details?.problems;
  return Array.isArray(problems) ? (problems as Problem[]).filter((p) => typeof p?.message === "string") : [];
};

/** The pauses before a submission is sent again, after a failure that may pass (mayPass); then its error stands. */
const SUBMIT_RETRY_PAUSES_MS = [500, 1000, 2000];

interface PutJobAnswer {
  readonly JobID: string;
  readonly Warnings: readonly string[];
}

/**
 * PUT /api/v1/orchestrator/jobs with one IdempotencyToken for this submission, sent again by each retry: when an
 * answer is lost after the API stored the job (a connection dropped, a proxy's 502), the retry gets that job back
 * instead of storing a second one.
 */
async function putJob(api: ApiClient, job: unknown, force: boolean): Promise<PutJobAnswer> {
  const body = { Job: job, IdempotencyToken: randomUUID(), ...(force ? { Force: true } : {}) };
  for (let attempt = 0; ; attempt++) {
    try {
      return await api.request<PutJobAnswer>("PUT", "/api/v1/orchestrator/jobs", body);
    } catch (e) {
      const pause = SUBMIT_RETRY_PAUSES_MS[attempt];
      if (pause === undefined || !mayPass(e)) throw e;
      printError(`Warning: ${e.message}; sending the same submission again (the API stores it once)`);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/**
 * A refusal of a submission (PUT /jobs or its dry run, PUT /jobs/diff), printed: every problem the server named, one
 * a line, or the API's message and hint for a refusal of the submission as a whole (a named job submitted again
 * unchanged). False when `e` is not a refusal (the caller throws it).
 */
export function printRefusal(e: unknown): boolean {
  if (!(e instanceof ApiError) || e.status !== 400) return false;
  const problems = problemsOf(e);
  if (problems.length === 0) {
    const hint = (e.body as { Hint?: unknown } | undefined)?.Hint;
    printError(`Error: ${e.message}${typeof hint === "string" && hint !== "" ? `\nHint: ${hint}` : ""}`);
    return true;
  }
  printProblems(problems);
  return true;
}

/** The spec's problems, as `job run`, `job validate` and the API's refusals say them. */
export function printProblems(problems: readonly Problem[]): void {
  printError(
    `Error: the job provided is invalid (${problems.length} ${problems.length === 1 ? "problem" : "problems"}):`,
  );
  for (const p of problems) printError(`  ${p.path ? `${p.path}: ` : ""}${p.message}`);
}

/**
 * Submits a job and says what became of it, as Bacalhau's `job run` and `docker run` do; the exit code is the
 * command's (RUN_EXIT). A job the server refuses as invalid is printed with every problem the server named, one a
 * line.
 */
export async function submitJob(api: ApiClient, job: unknown, settings: RunSettings): Promise<number> {
  let response: PutJobAnswer;
  try {
    response = await putJob(api, job, settings.force);
  } catch (e) {
    if (printRefusal(e)) return RUN_EXIT.failed;
    throw e;
  }
  const id = response.JobID;
  if (!settings.idOnly) for (const w of response.Warnings) printError(`Warning: ${w}`);
  // An update (a named job's) says which version it made, as `job rerun` does; a first submission says what
  // Bacalhau's CLI says.
  const version = namedIn(job) ? await versionOf(api, id) : 1;
  const said = `Job successfully submitted. Job ID: ${id}` + (version > 1 ? `, Job Version: ${version}` : "");
  return watchJob(api, id, said, settings);
}

/** Whether a job spec names its job: only such a submission may update one. */
const namedIn = (job: unknown): boolean =>
  typeof job === "object" && job !== null && ![undefined, ""].includes((job as { Name?: unknown }).Name as string);

/** The job's current version (the PUT's answer does not carry it, as Bacalhau's does not). */
async function versionOf(api: ApiClient, jobId: string): Promise<number> {
  const { Job } = await api.request<{ Job: { Version: number } }>("GET", `/api/v1/orchestrator/jobs/${jobId}`);
  return Job.Version;
}

/**
 * After a job's submission or rerun: `said` (or with --id-only the id alone), then, unless --wait=false, its progress
 * or with --follow its output until it ends; the exit code is RUN_EXIT's.
 */
export async function watchJob(
  api: ApiClient,
  id: string,
  said: string,
  settings: Omit<RunSettings, "force">,
): Promise<number> {
  if (settings.idOnly) print(id);
  // With --follow stdout is the job's: what Shoal says goes to stderr.
  else (settings.follow ? printError : print)(said);
  if (!settings.wait) {
    if (!settings.idOnly)
      print(
        `\nTo follow it, run:\n\tshoal job describe ${id}\n\tshoal job history ${id}\n\tshoal job executions ${id}`,
      );
    return RUN_EXIT.completed;
  }
  const stopWatching = () => {
    printError(`\nProgress tracking canceled. The job is still running.\nTo stop it, run:\n\tshoal job stop ${id}`);
    process.exit(RUN_EXIT.interrupted);
  };
  process.once("SIGINT", stopWatching);
  try {
    return settings.follow ? await followOutput(api, id, settings) : await waitWithProgress(api, id, settings);
  } finally {
    process.off("SIGINT", stopWatching);
  }
}

async function waitWithProgress(api: ApiClient, id: string, settings: Omit<RunSettings, "force">): Promise<number> {
  const quiet = settings.idOnly;
  let display: ProgressDisplay | undefined;
  if (!quiet) {
    printError("Checking job status... (Enter Ctrl+C to exit at any time, your job will continue running):\n");
    display = progressDisplay(process.stderr);
  }
  const { job: last, timedOut } = await followJob(api, id, {
    timeoutMs: settings.waitTimeoutSeconds * 1000,
    ...(display ? { onEntry: display.entry } : {}),
  });
  if (timedOut) return timedOutWaiting(settings, last.State.StateType);
  const code = endCode(last);
  if (code !== RUN_EXIT.completed) {
    if (last.State.StateType === "Failed" && !quiet) await printFailedOutput(api, id);
  } else if (!quiet) {
    print(`\nJob ${id} ${last.State.StateType}.`);
    print(`\nTo get more details about the run, execute:\n\tshoal job describe ${id}`);
    print(`\nTo get more details about the run executions, execute:\n\tshoal job executions ${id}`);
  }
  return code;
}

function timedOutWaiting(settings: Omit<RunSettings, "force">, state: string): number {
  const after = formatSeconds(settings.waitTimeoutSeconds);
  printError(`\nProgress tracking timed out after ${after}. The job is still running (${state}).`);
  return RUN_EXIT.stillGoing;
}

/** The exit code of a job that ended (or, a long-running one, runs); a failure or a stop is said on stderr. */
function endCode(job: JobJson): number {
  const state = job.State.StateType;
  if (state !== "Failed" && state !== "Stopped") return RUN_EXIT.completed;
  printError(`\nError: ${jobEndText(job)}`);
  return state === "Failed" ? RUN_EXIT.failed : RUN_EXIT.stopped;
}

const POLL_MS = 500;

/**
 * `--follow`: each execution's output, followed to its end, one execution after another as the job gets them (a
 * retry on another node follows the first), until the job ends. Only the wait for the job's first execution is
 * bounded by --wait-timeout: once it runs, its output is followed as long as it runs (Bacalhau's follow has no
 * timeout either).
 */
async function followOutput(api: ApiClient, id: string, settings: Omit<RunSettings, "force">): Promise<number> {
  if (!settings.idOnly)
    printError("Waiting for logs... (Enter Ctrl+C to exit at any time, your job will continue running):\n");
  const jobPath = `/api/v1/orchestrator/jobs/${encodeURIComponent(id)}`;
  const startBy = Date.now() + settings.waitTimeoutSeconds * 1000;
  const followed = new Set<string>();
  for (;;) {
    // The job before its executions: an execution made before the job ended is then in the list read after.
    const { Job: job } = await api.request<{ Job: JobJson }>("GET", jobPath);
    const { Items } = await api.request<{ Items: ExecutionJson[] }>("GET", `${jobPath}/executions?limit=1000`);
    const next = Items.filter((e) => !followed.has(e.ID)).sort((a, b) => a.CreateTime - b.CreateTime)[0];
    if (next !== undefined) {
      followed.add(next.ID);
      if (followed.size > 1) printError(`\n(execution ${shortId(next.ID)} on node ${next.NodeID})`);
      try {
        await printJobLogs(api, id, { executionId: next.ID, follow: true, raw: false });
      } catch (e) {
        // An execution that never reached its node has no output: the job goes on elsewhere.
        if (!(e instanceof ApiError && (e.status === 404 || e.status === 409))) throw e;
        printError(`(no output from execution ${shortId(next.ID)}: ${e.message})`);
      }
      continue;
    }
    if (TERMINAL_JOB_STATES.has(job.State.StateType)) {
      const code = endCode(job);
      // Its output was followed; what is left to say is why its executions ended without their work done.
      if (code !== RUN_EXIT.completed) for (const line of executionRefusals(Items)) printError(line);
      return code;
    }
    if (followed.size === 0 && Date.now() >= startBy) return timedOutWaiting(settings, job.State.StateType);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
