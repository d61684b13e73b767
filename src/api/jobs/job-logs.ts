import type { Clock } from "../../actors/clock.ts";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import { within } from "../../lifecycle/within.ts";
import { conflict, notFound, ShoalError, unavailable } from "../../errors/shoal-error.ts";
import type { JobViews } from "../../projections/jobs/job-views.ts";
import type { NodeLogReader } from "../../transport/node-log-client.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import { isDiscarded, isTerminalComputeState } from "../../../machines/execution/execution-states.ts";
import { executionByIdOrPrefix } from "./execution-by-id.ts";
import { resolveJobVersion } from "./job-lookup.ts";
import { completedLines, LogLines, type ExecutionLog } from "./log-lines.ts";

/** How long a stop waits for the streams it ended to say so to their readers. */
const STOP_WAIT_MS = 2_000;

export interface JobLogsRead {
  readonly follow: boolean;
  /** Only the last N lines written so far (0: none, Bacalhau's `tail=true`); undefined: all. */
  readonly tailLines?: number;
  readonly signal?: AbortSignal;
}

/** Which of a job's executions a read picks from (LogsPick's fields are the logs route's query). */
export interface LogsPick {
  readonly executionId?: string | undefined;
  /** 0 or absent: every version. */
  readonly jobVersion?: number | undefined;
}

export interface JobLogsOptions {
  readonly clock: Clock;
  /** The one deadline heap, on the same clock: a read's pauses before it looks again. */
  readonly deadlines: DeadlineScheduler;
  /** How often a read waiting for an execution to reach its node or to end looks again. */
  readonly retryMs?: number;
  /** How long a read without follow waits for an execution that is not on its node (yet or any more). */
  readonly settleMs?: number;
}

/**
 * The orchestrator's job logs (docs/jobs.md, Logs), as Bacalhau's orchestrator ReadLogs has them:
 * one execution's output — the one asked for, or the job's latest — read live from its node while
 * it is not over, and from the RunOutput its node reported once it is (what Bacalhau's
 * CompletedStreamer serves).
 */
export class JobLogs {
  private readonly retryMs: number;
  private readonly settleMs: number;
  /** Ends every read when the orchestrator stops, so that the API can close without cutting streams off. */
  private readonly closing = new AbortController();
  private readonly sessions = new Set<Promise<unknown>>();
  /** Each read's pause is a deadline of its own. */
  private nextPause = 0;

  constructor(
    private readonly views: JobViews,
    private readonly nodes: NodeLogReader,
    private readonly options: JobLogsOptions,
  ) {
    this.retryMs = options.retryMs ?? 500;
    this.settleMs = options.settleMs ?? 10_000;
  }

  /**
   * The execution to read, among the executions of the version asked for (`jobVersion`), else among every
   * version's as Bacalhau's ReadLogs picks them (so right after an update the earlier version's output is still
   * there to read): `executionId` when given (it, or a unique prefix of it such as the short id, must be among
   * them), else the latest that did not end without a result (Bacalhau's choice), or failing that the latest of all,
   * so that a failed job's output can be read too (Bacalhau refuses that).
   */
  select(idOrName: string, pick: LogsPick = {}): ExecutionState {
    // As every other job route: a full id, a name, or the short id the CLIs print.
    const asked = pick.jobVersion ?? 0;
    const { job, at } = resolveJobVersion(this.views, idOrName, undefined, asked);
    const jobId = job.jobId;
    const every = asked === 0;
    const executions = this.views
      .executionsOfJob(jobId)
      .filter((e) => e.computeState !== undefined && (every || e.jobVersion === at.version));
    // The version is named once the job has more than one.
    const which = every || job.version === 1 ? "" : ` version ${at.version}`;
    const { executionId } = pick;
    if (executionId) {
      const found = executionByIdOrPrefix(executions, executionId);
      if (!found) throw notFound(`unable to find execution ${executionId} in job ${jobId}${which}`);
      return found;
    }
    if (executions.length === 0) {
      throw conflict(
        `job ${jobId}${which} has no executions yet (it is ${at.state}): ` +
          "there is no output to read until it is placed on a node",
      );
    }
    const latest = (list: ExecutionState[]) => list.reduce((a, b) => (b.modifyTime > a.modifyTime ? b : a));
    const kept = executions.filter((e) => !isDiscarded(e.computeState!));
    return latest(kept.length > 0 ? kept : executions);
  }

  /**
   * The execution's lines, as they come with `follow`, until it ends (or `signal`). When the
   * orchestrator stops first, the last thing is an Unavailable error: the reader knows it was cut.
   */
  async *lines(execution: ExecutionState, read: JobLogsRead): AsyncGenerator<ExecutionLog> {
    const signal = read.signal ? AbortSignal.any([read.signal, this.closing.signal]) : this.closing.signal;
    yield* this.read(execution, { ...read, signal });
    if (this.closing.signal.aborted && !read.signal?.aborted)
      throw unavailable("the orchestrator is stopping: read the logs again once it is back", 5);
  }

  /** Registers a stream's whole session (its last message sent), so that stop() can wait for it. */
  track<T>(session: Promise<T>): Promise<T> {
    this.sessions.add(session);
    session.then(
      () => this.sessions.delete(session),
      () => this.sessions.delete(session),
    );
    return session;
  }

  /**
   * Ends every read under way (the orchestrator is stopping) and waits, a while, for their sessions to send their last
   * message.
   */
  async stop(): Promise<void> {
    this.closing.abort();
    // A bound on a shutdown step, in real time like every other (src/lifecycle): not a wait of the cluster's.
    await within(Promise.allSettled([...this.sessions]), STOP_WAIT_MS);
  }

  private async *read(execution: ExecutionState, read: JobLogsRead): AsyncGenerator<ExecutionLog> {
    const { clock, deadlines } = this.options;
    const waitUntil = clock.now() + this.settleMs;
    for (;;) {
      const now = this.views.execution(execution.executionId) ?? execution;
      if (now.computeState !== undefined && isTerminalComputeState(now.computeState)) {
        yield* this.completed(now, read.tailLines);
        return;
      }
      const outcome = yield* this.live(now, read);
      if (outcome === "ended") return;
      // Not on its node (not there yet, or gone since it ended): wait for the node or for its end.
      if (read.signal?.aborted) return;
      if (!read.follow && clock.now() >= waitUntil) return;
      await deadlines.sleep(`job-logs/${execution.executionId}/${this.nextPause++}`, this.retryMs, read.signal);
      if (read.signal?.aborted) return;
    }
  }

  private *completed(execution: ExecutionState, tailLines: number | undefined): Generator<ExecutionLog> {
    const output = execution.runOutput;
    if (!output) return;
    const lines = completedLines(output.Stdout, output.stderr);
    yield* tailLines === undefined ? lines : tailLines === 0 ? [] : lines.slice(-tailLines);
  }

  /** "ended" once the node said the output is over; "absent" when the node does not run it (and nothing was given). */
  private async *live(execution: ExecutionState, read: JobLogsRead): AsyncGenerator<ExecutionLog, "ended" | "absent"> {
    const splitter = new LogLines();
    let given = false;
    try {
      for await (const chunk of this.nodes.read(execution.nodeId, execution.executionId, {
        follow: read.follow,
        ...(read.tailLines === undefined ? {} : { tailLines: read.tailLines }),
        ...(read.signal ? { signal: read.signal } : {}),
      })) {
        for (const line of splitter.push(chunk)) {
          given = true;
          yield line;
        }
      }
    } catch (e) {
      if (e instanceof ShoalError && e.kind === "NotFound" && !given) return "absent";
      if (!(e instanceof ShoalError && e.kind === "NotFound")) throw e;
      // Its container went away after giving output: the execution ended; what it wrote was given.
    }
    yield* splitter.flush();
    return "ended";
  }
}
