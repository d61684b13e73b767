import { formatDuration, parseDuration } from "../config/duration.ts";
import { badRequest, notFound, type ShoalError } from "../errors/shoal-error.ts";
import { CapacityLedger } from "../compute/executor/capacity-ledger.ts";
import type {
  ExecutionEndReason,
  ExecutionResources,
  ExecutionResult,
  ExecutionSpec,
  Executor,
  LogChunk,
  LogOptions,
  ReconcileReport,
  RunningExecution,
} from "../compute/executor/executor.ts";

/**
 * The task environment variable that says how long a sim execution runs: a duration (`30s`), or
 * `until-stopped` for one that runs until it is cancelled, as a service's or a daemon's does. The
 * work a node gets does not say the job's type, so the task has to.
 */
export const SIM_RUN_ENV = "SHOAL_SIM_RUN";
export const UNTIL_STOPPED = "until-stopped";

/** The longest command a sim execution's output line repeats. */
const MAX_COMMAND_CHARS = 200;

interface SimRun {
  /** What the execution prints: one line, known from its start. */
  readonly stdout: string;
  readonly startedAt: string;
  readonly timeoutMs: number;
  /** Its end (run time or timeout); undefined while it runs until stopped. */
  timer: NodeJS.Timeout | undefined;
  readonly end: (result: ExecutionResult) => void;
  /** Followers of its logs wait for this. */
  readonly done: Promise<ExecutionResult>;
}

/** How long the spec's execution runs (undefined: until stopped), or why it cannot run. */
function runTimeOf(spec: ExecutionSpec, defaultMs: number): number | undefined | ShoalError {
  const asked = spec.env?.[SIM_RUN_ENV];
  if (asked === undefined) return defaultMs;
  if (asked === UNTIL_STOPPED) return undefined;
  const ms = parseDuration(asked);
  if (ms !== undefined && ms >= 0) return ms;
  return badRequest(
    `execution ${spec.executionId} has ${SIM_RUN_ENV}=${JSON.stringify(asked)}: ` +
      `a sim node reads it as a duration (e.g. 2s) or ${UNTIL_STOPPED}`,
  );
}

/**
 * A `shoal sim` node's engine: nothing runs. An execution holds its resources in the node's
 * ledger, "runs" for the node's run time (or its task's SHOAL_SIM_RUN) and exits 0 with one line
 * of output; one whose task says `until-stopped` runs until cancelled; a task's execution timeout
 * shorter than its run ends it as a timeout. It holds a timer only while an execution has an end
 * to wait for, and keeps a few fields per running execution: thousands of nodes share one process.
 * Nothing survives the node's process, as nothing survives a machine that crashed.
 */
export class SimExecutor implements Executor {
  readonly engine = "docker";
  readonly ledger: CapacityLedger;
  readonly #runs = new Map<string, SimRun>();
  #closed = false;

  constructor(
    private readonly nodeId: string,
    capacity: ExecutionResources,
    /** How long an execution runs when its task does not say. */
    private readonly runMs: number,
  ) {
    this.ledger = new CapacityLedger(nodeId, capacity);
  }

  refusal(spec: ExecutionSpec): ShoalError | undefined {
    const network = spec.network ?? "None";
    if (network !== "None")
      return badRequest(`node ${this.nodeId} is simulated and offers no network (execution asks for ${network})`);
    const runTime = runTimeOf(spec, this.runMs);
    if (typeof runTime === "object") return runTime;
    return this.ledger.refusal(spec.executionId, spec.resources);
  }

  bidRefusal(spec: ExecutionSpec): Promise<ShoalError | undefined> {
    return Promise.resolve(this.refusal(spec));
  }

  run(spec: ExecutionSpec): Promise<RunningExecution> {
    const refused = this.refusal(spec);
    if (refused) return Promise.reject(refused);
    const runMs = runTimeOf(spec, this.runMs) as number | undefined;
    this.ledger.reserve(spec.executionId, spec.resources);
    const { executionId } = spec;
    const command = [...(spec.entrypoint ?? []), ...(spec.parameters ?? [])].join(" ").slice(0, MAX_COMMAND_CHARS);
    const ran = runMs === undefined ? "until stopped" : `for ${formatDuration(runMs)}`;
    let end!: (result: ExecutionResult) => void;
    const done = new Promise<ExecutionResult>((resolve) => (end = resolve));
    const run: SimRun = {
      stdout: `sim node ${this.nodeId} runs ${spec.image}${command ? ` ${command}` : ""} ${ran}\n`,
      startedAt: new Date().toISOString(),
      timeoutMs: spec.timeoutMs ?? 0,
      timer: undefined,
      end,
      done,
    };
    const { timeoutMs } = run;
    if (timeoutMs > 0 && (runMs === undefined || timeoutMs < runMs))
      run.timer = setTimeout(() => this.#finish(executionId, "timeout"), timeoutMs);
    else if (runMs !== undefined) run.timer = setTimeout(() => this.#finish(executionId, "exited"), runMs);
    this.#runs.set(executionId, run);
    return Promise.resolve({ executionId, started: Promise.resolve(true), done, details: {} });
  }

  #finish(executionId: string, reason: ExecutionEndReason, cancelReason?: string): ExecutionResult | undefined {
    const run = this.#runs.get(executionId);
    if (run === undefined) return undefined;
    clearTimeout(run.timer);
    this.#runs.delete(executionId);
    this.ledger.release(executionId);
    const stdout = run.stdout;
    const errorMsg =
      reason === "cancelled"
        ? `execution ${executionId} was cancelled${cancelReason ? `: ${cancelReason}` : ""}`
        : reason === "timeout"
          ? `execution ${executionId} timed out: it ran past its ${formatDuration(run.timeoutMs)} timeout and was killed`
          : "";
    const result: ExecutionResult = {
      executionId,
      state: reason === "exited" ? "Completed" : reason === "cancelled" ? "Cancelled" : "Failed",
      reason,
      runOutput: {
        STDOUT: stdout,
        StdoutTruncated: false,
        STDERR: "",
        StderrTruncated: false,
        // As a container's: 143 after the SIGTERM of a cancel, 137 after the SIGKILL of a timeout.
        ExitCode: reason === "exited" ? 0 : reason === "cancelled" ? 143 : 137,
        ErrorMsg: errorMsg,
      },
      stdoutBytes: Buffer.byteLength(stdout),
      stderrBytes: 0,
      startedAt: run.startedAt,
      finishedAt: new Date().toISOString(),
    };
    // After close() an end stays pending, as a container keeps running for the next start.
    if (!this.#closed) run.end(result);
    return result;
  }

  cancel(executionId: string, reason?: string): Promise<ExecutionResult> {
    const result = this.#finish(executionId, "cancelled", reason);
    if (result === undefined)
      return Promise.reject(notFound(`execution ${executionId} does not run on node ${this.nodeId}`));
    return Promise.resolve(result);
  }

  async *logs(executionId: string, options: LogOptions = {}): AsyncGenerator<LogChunk> {
    const run = this.#runs.get(executionId);
    if (run === undefined) throw notFound(`execution ${executionId} does not run on node ${this.nodeId}`);
    yield { stream: "stdout", data: Buffer.from(run.stdout) };
    if (!options.follow) return;
    const { signal } = options;
    if (signal?.aborted) return;
    let onAbort = () => {};
    const aborted = new Promise<void>((resolve) => (onAbort = resolve));
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await Promise.race([run.done, aborted]);
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  reconcile(known: Iterable<string>): Promise<ReconcileReport> {
    return Promise.resolve({ adopted: [], removed: [], missing: [...known], failed: [] });
  }

  running(): readonly string[] {
    return [...this.#runs.keys()];
  }

  close(): Promise<void> {
    this.#closed = true;
    for (const run of this.#runs.values()) clearTimeout(run.timer);
    return Promise.resolve();
  }
}
