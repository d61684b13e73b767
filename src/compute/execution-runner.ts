import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { asShoalError, badRequest, type ShoalError } from "../errors/shoal-error.ts";
import { ProtocolError, unpack, validate } from "../transport/codec.ts";
import { validateWorkMessage } from "../transport/decode-work.ts";
import type { ProtocolResponse } from "../transport/messages.ts";
import {
  ExecutionID,
  MAX_REPORTED_OUTPUT,
  MAX_REPORTED_REASON,
  type ExecutionReport,
  type WorkMessage,
  type RunExecution,
  type RunOutput,
  type WorkTask,
} from "../transport/work-messages.ts";
import type { ExecutionResult, ExecutionSpec, Executor, RunningExecution } from "./executor/executor.ts";
import { failureReasonOf, type ExecutionObserver } from "./execution-failure-reason.ts";
import type { KnownExecutions } from "./known-executions.ts";
import type { ExecutionResults } from "./publisher/execution-results.ts";
import type { OutputMount } from "./publisher/result-staging.ts";

/** A report as the runner makes it; MessageID and NodeID are added once, so a report sent again is the same one. */
type ReportBody = ExecutionReport extends infer R
  ? R extends ExecutionReport
    ? Omit<R, "MessageID" | "NodeID">
    : never
  : never;

export interface ExecutionRunnerOptions {
  readonly nodeId: string;
  readonly executor: Executor;
  readonly known: KnownExecutions;
  /** Sends one report to the orchestrator (a request); throws when it cannot be delivered. */
  readonly send: (report: ExecutionReport) => Promise<ProtocolResponse>;
  readonly logger: Logger;
  /** First wait before a report is sent again (doubling to maxRetryMs). */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
  /** Told of container starts and failed executions (the node's /metrics). */
  readonly observer?: ExecutionObserver;
  /** Stages and publishes results; without it the node refuses tasks that have a publisher. */
  readonly results?: ExecutionResults;
}

/** Cuts a stream to what a report carries, never in the middle of a surrogate pair. */
function cut(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), cut: true };
}

function reported(output: RunOutput): RunOutput {
  const stdout = cut(output.STDOUT, MAX_REPORTED_OUTPUT);
  const stderr = cut(output.STDERR, MAX_REPORTED_OUTPUT);
  return {
    STDOUT: stdout.text,
    StdoutTruncated: output.StdoutTruncated || stdout.cut,
    STDERR: stderr.text,
    StderrTruncated: output.StderrTruncated || stderr.cut,
    ExitCode: output.ExitCode,
    ErrorMsg: cut(output.ErrorMsg, MAX_REPORTED_REASON).text,
  };
}

const reason = (text: string) => cut(text, MAX_REPORTED_REASON).text;

/**
 * The executor's view of a task: Bacalhau's `KEY=value` environment variables and the task's env, merged (the task's
 * win).
 */
export function executionSpecOf(
  executionId: string,
  task: WorkTask,
  outputs: readonly OutputMount[] = [],
): ExecutionSpec {
  const env: Record<string, string> = {};
  for (const pair of task.Engine.EnvironmentVariables ?? []) {
    const at = pair.indexOf("=");
    if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
    else env[pair] = "";
  }
  Object.assign(env, task.Env ?? {});
  return {
    executionId,
    image: task.Engine.Image,
    ...(task.Engine.Entrypoint === undefined ? {} : { entrypoint: task.Engine.Entrypoint }),
    ...(task.Engine.Parameters === undefined ? {} : { parameters: task.Engine.Parameters }),
    ...(Object.keys(env).length === 0 ? {} : { env }),
    ...(task.Engine.WorkingDirectory === undefined ? {} : { workingDir: task.Engine.WorkingDirectory }),
    resources: { cpuMillis: task.Resources.CPUMillis, memoryBytes: task.Resources.MemoryBytes },
    network: task.Network,
    timeoutMs: task.ExecutionTimeout * 1000,
    ...(task.InputSources === undefined || task.InputSources.length === 0
      ? {}
      : {
          inputs: task.InputSources.map((i) =>
            i.Type === "localDirectory"
              ? { type: i.Type, sourcePath: i.SourcePath, readWrite: i.ReadWrite, target: i.Target }
              : { type: i.Type, url: i.URL, target: i.Target },
          ),
        }),
    ...(outputs.length === 0 ? {} : { outputs }),
  };
}

/**
 * Bacalhau resolves a task env value `env:NAME` from the node's own environment, for names its
 * operator allows (Compute.Env.AllowList). Shoal has no such list yet, so it gives out nothing:
 * such a task is refused rather than run with the literal text as its value.
 */
function hostEnvRefusal(executionId: string, task: WorkTask): ShoalError | undefined {
  const asked = Object.entries(task.Env ?? {}).find(([, value]) => value.startsWith("env:"));
  if (asked === undefined) return undefined;
  return badRequest(
    `execution ${executionId} asks for ${asked[0]} from the node's environment (${asked[1]}), which this node does not give out`,
  );
}

/** Its start, with the limits its container runs under (when the executor says any). */
function startReport(execution: RunningExecution): ReportBody {
  const details = execution.details;
  const ExecutionID = execution.executionId;
  if (Object.keys(details).length === 0) return { Type: "ExecutionStarted", ExecutionID };
  return { Type: "ExecutionStarted", ExecutionID, Details: { ...details } };
}

/**
 * The report an execution's end makes: Completed when its command exited 0, else Failed with the executor's reason as
 * cause.
 */
export function endReport(result: ExecutionResult): ReportBody {
  const output = reported(result.runOutput);
  if (result.state === "Completed")
    return { Type: "ExecutionCompleted", ExecutionID: result.executionId, RunOutput: output };
  return {
    Type: "ExecutionFailed",
    ExecutionID: result.executionId,
    Reason: reason(
      result.runOutput.ErrorMsg ||
        `execution ${result.executionId} ${result.state === "Cancelled" ? "was cancelled" : "failed"} (${result.reason})`,
    ),
    Cause: result.reason,
    RunOutput: output,
  };
}

/**
 * A compute node's side of the work protocol (docs/protocol.md, Work): validates each work
 * message, runs executions through the executor, and reports bids, starts and ends to the
 * orchestrator, sending each report again until it is answered. What it has taken is kept
 * (KnownExecutions), so that a restarted agent reconciles and still reports every end.
 */
export class ExecutionRunner {
  /** Executions being handed to the executor now: a repeat of their message waits for that. */
  private readonly starting = new Set<string>();
  private readonly running = new Map<string, RunningExecution>();
  /**
   * Executions told to stop whose containers have not ended yet, each with its end: the orchestrator counts their room
   * as free from the moment it told them to stop, and may place new work there at once (a job's next version on the
   * node where its earlier one stops). Work refused for lack of room is judged again once they ended.
   */
  private readonly stopping = new Map<string, Promise<unknown>>();
  /** Each execution's reports go out one after another, in order. */
  private readonly chains = new Map<string, Promise<void>>();
  /**
   * Reports queued in an execution's chain and not yet being sent, by execution: a report's type,
   * or `final:<MessageID>` for an end. The orchestrator repeats its work until it hears an answer;
   * while it is slow to answer, each repeat would queue the same report again, the chain would
   * grow faster than it drains, and the execution's end would wait behind all of them.
   */
  private readonly waiting = new Map<string, Set<string>>();
  private stopped = false;
  private readonly sleeps = new Set<() => void>();

  constructor(private readonly options: ExecutionRunnerOptions) {}

  /**
   * One message from `shoal.work.<id>.execution`, undecoded. Never throws: a bad one is refused (logged, or a
   * BidRejected when it names an execution).
   */
  handle(data: Uint8Array): void {
    let raw: unknown;
    let message: WorkMessage;
    try {
      raw = unpack(data);
      message = validateWorkMessage(raw);
    } catch (e) {
      this.refuseMessage(raw, e as Error);
      return;
    }
    if (message.NodeID !== this.options.nodeId) {
      this.options.logger.warn(
        { nodeId: message.NodeID, type: message.Type },
        "work message refused: it is for another node",
      );
      return;
    }
    switch (message.Type) {
      case "AskForBid":
        this.bid(message.ExecutionID, message.Task);
        return;
      case "RunExecution":
        void this.run(message);
        return;
      case "CancelExecution":
        void this.cancel(message.ExecutionID, message.Reason);
        return;
    }
  }

  /**
   * A message the node cannot take is refused, nothing run: with a BidRejected (BadRequest, the
   * reason) when it is an ask or a run naming a valid execution of this node, else only logged.
   */
  private refuseMessage(raw: unknown, e: Error): void {
    const why = e instanceof ProtocolError ? `invalid message: ${e.message}` : e.message;
    this.options.logger.warn({ reason: why }, "work message refused");
    const fields = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
    const id = fields.ExecutionID;
    const type = fields.Type;
    const asks = type === "AskForBid" || type === "RunExecution";
    if (!asks || fields.NodeID !== this.options.nodeId || typeof id !== "string" || !isExecutionId(id)) return;
    // never undo one it runs
    if (this.starting.has(id) || this.running.has(id) || this.options.known.get(id) !== undefined) return;
    this.report({ Type: "BidRejected", ExecutionID: id, Reason: reason(why), Code: "BadRequest", Answers: type });
  }

  /**
   * Would it run here now? Answered from the executor's view of the node (capacity, network
   * policy) and the task (engine, environment), running and holding nothing: the orchestrator's
   * placement already counts the capacity from placement to the execution's end, and the run is
   * checked again when it comes (docs/jobs.md, Dispatch). A repeat for an execution this node
   * already took is answered with where it stands.
   */
  private bid(executionId: string, task: WorkTask): void {
    if (this.standing(executionId)) return;
    const hostEnv = this.taskRefusal(executionId, task);
    const spec = executionSpecOf(executionId, task);
    const refusal = hostEnv
      ? Promise.resolve(hostEnv)
      : this.options.executor
          .bidRefusal(spec)
          .then((refused) => this.refusalAfterStops(refused, () => this.options.executor.bidRefusal(spec)) ?? refused);
    refusal.then(
      (refused) => {
        // A run that came while the engine was asked answers for itself.
        if (this.starting.has(executionId) || this.options.known.get(executionId) !== undefined) return;
        this.report(
          refused ? rejected(executionId, refused, "AskForBid") : { Type: "BidAccepted", ExecutionID: executionId },
        );
      },
      (err: unknown) =>
        this.options.logger.warn({ err, executionId }, "answering a bid failed; the orchestrator asks again"),
    );
  }

  /**
   * For an execution this node took: reports where it stands (its end if not yet delivered, else
   * its bid and start) and returns true; false for one it does not know. One whose end was
   * answered is not run again: that end stands.
   */
  private standing(id: string): boolean {
    const known = this.options.known.get(id);
    if (this.starting.has(id)) return true; // its bid (or refusal) follows once the executor has it
    if (known === undefined) return false;
    if (known.delivered)
      this.options.logger.info(
        { executionId: id },
        "work for an execution that already ended here (its end was delivered); not run again",
      );
    else if (known.final) this.resend(known.final);
    else if (this.running.has(id)) {
      this.report({ Type: "BidAccepted", ExecutionID: id });
      const running = this.running.get(id)!;
      void running.started.then((started) => started && this.report(startReport(running)));
    }
    return true;
  }

  private async run(message: RunExecution): Promise<void> {
    const id = message.ExecutionID;
    // A repeat (the orchestrator heard nothing yet): where it stands.
    if (this.standing(id)) return;
    const spec = executionSpecOf(id, message.Task);
    // Refused at once (nothing kept, nothing written) when it cannot run here.
    const hostEnv = this.taskRefusal(id, message.Task);
    let refused = hostEnv ?? this.options.executor.refusal(spec);
    const again = hostEnv ? undefined : this.refusalAfterStops(refused, () => this.options.executor.refusal(spec));
    if (again) {
      // A repeat meanwhile waits for this answer.
      this.starting.add(id);
      refused = await again;
      this.starting.delete(id);
    }
    if (refused) {
      this.options.observer?.executionFailed("refused");
      this.report(rejected(id, refused, "RunExecution"));
      return;
    }
    this.starting.add(id);
    // Kept before its container can exist: a node that dies meanwhile finds the container (adopted)
    // or not (reported lost) when it restarts, and never leaves it unaccounted for.
    const publisher = message.Task.Publisher?.Type;
    this.options.known.set(id, { jobId: message.JobID, ...(publisher === undefined ? {} : { publisher }) });
    let execution: RunningExecution;
    try {
      const outputs = (await this.options.results?.prepare(id, message.Task)) ?? [];
      execution = await this.options.executor.run(outputs.length === 0 ? spec : { ...spec, outputs });
    } catch (e) {
      await this.options.results?.discard(id).catch(() => undefined);
      this.options.known.delete(id);
      this.starting.delete(id);
      this.options.observer?.executionFailed("refused");
      this.report(rejected(id, asShoalError(e), "RunExecution"));
      return;
    }
    this.starting.delete(id);
    this.report({ Type: "BidAccepted", ExecutionID: id });
    this.follow(execution);
  }

  /** Reports its start (if it starts) and its end, kept until delivered. */
  private follow(execution: RunningExecution, reportStart = true): void {
    const id = execution.executionId;
    this.running.set(id, execution);
    const observer = this.options.observer;
    if (reportStart)
      void execution.started.then((started) => {
        if (!started) return;
        observer?.containerStarted();
        this.report(startReport(execution));
      });
    void execution.done.then(async (result) => {
      this.running.delete(id);
      this.stopping.delete(id);
      if (result.state === "Failed" && result.reason !== "cancelled")
        observer?.executionFailed(failureReasonOf(result.reason));
      this.finish(id, await this.published(id, result));
    });
  }

  /**
   * Its end, with where its results were published when its task has a publisher. A result the
   * node cannot publish (larger than it publishes, say) fails the execution with that reason.
   */
  private async published(id: string, result: ExecutionResult): Promise<ReportBody> {
    const type = this.options.known.get(id)?.publisher;
    const results = this.options.results;
    if (type === undefined || results === undefined) return endReport(result);
    if (result.state !== "Completed") {
      await results.discard(id).catch(() => undefined);
      return endReport(result);
    }
    try {
      const PublishedResult = await results.publish(id, type, result.runOutput);
      return { ...endReport(result), PublishedResult } as ReportBody;
    } catch (e) {
      const why = asShoalError(e).message;
      this.options.logger.warn({ executionId: id, reason: why }, "an execution's results could not be published");
      this.options.observer?.executionFailed("publish-failed");
      return {
        Type: "ExecutionFailed",
        ExecutionID: id,
        Reason: reason(`execution ${id} completed, but its results were not published: ${why}`),
        Cause: "publish-failed",
        RunOutput: reported(result.runOutput),
      };
    }
  }

  /** Why the task cannot run on this node whatever its engine says: host env it asks for, a publisher it lacks. */
  private taskRefusal(executionId: string, task: WorkTask): ShoalError | undefined {
    const hostEnv = hostEnvRefusal(executionId, task);
    if (hostEnv !== undefined || task.Publisher === undefined) return hostEnv;
    const results = this.options.results;
    if (results === undefined)
      return badRequest(
        `execution ${executionId} publishes its results with ${task.Publisher.Type}; ` +
          `node ${this.options.nodeId} has none`,
      );
    return results.refusal(executionId, this.options.nodeId, task);
  }

  private finish(executionId: string, body: ReportBody): void {
    const final = this.sealed(body);
    const known = this.options.known.get(executionId);
    this.options.known.set(executionId, { jobId: known?.jobId ?? "", final });
    this.resend(final);
  }

  /**
   * A refusal given while executions told to stop still run here is asked again (`ask`) once they have ended: they may
   * hold the room it lacked. Undefined, without waiting, when there is nothing to ask again: `refused` stands.
   */
  private refusalAfterStops(
    refused: ShoalError | undefined,
    ask: () => ShoalError | undefined | Promise<ShoalError | undefined>,
  ): Promise<ShoalError | undefined> | undefined {
    if (refused === undefined || this.stopping.size === 0) return undefined;
    return Promise.all(this.stopping.values()).then(ask);
  }

  private async cancel(executionId: string, why: string): Promise<void> {
    const running = this.running.get(executionId);
    if (running !== undefined) {
      this.stopping.set(executionId, running.done.then(noop, noop));
      try {
        await this.options.executor.cancel(executionId, why); // its end comes through `done`
      } catch (e) {
        this.options.logger.warn({ executionId, reason: asShoalError(e).message }, "could not cancel an execution");
      }
      return;
    }
    const known = this.options.known.get(executionId);
    if (known?.final && !known.delivered) {
      this.resend(known.final);
      return;
    }
    if (this.starting.has(executionId)) {
      // Being started now: cancel it once the executor has it.
      setTimeout(() => void this.cancel(executionId, why), 100);
      return;
    }
    if (known !== undefined && !known.final && !known.delivered) {
      // Taken here, but its container is not watched again yet (the reconcile after a restart has not adopted it, or
      // could not reach the engine): "does not run here" would leave it running, adopted later and never stopped.
      this.options.known.set(executionId, { ...known, cancelled: why });
      this.options.logger.info(
        { executionId },
        "cancel of an execution whose container this node has not adopted yet; it is stopped once adopted",
      );
      return;
    }
    // Never ran here (or its end was delivered): say it does not run, so the orchestrator can close it.
    this.report(notRunHere(executionId, this.options.nodeId));
  }

  /**
   * After a restart: ends not yet delivered are sent again; the engine's containers of the other
   * known executions are adopted (their end reported when it comes), those told to stop meanwhile
   * are stopped, and the known executions with no container are reported failed, `lost` (cancelled,
   * when they were told to stop).
   */
  async reconcile(): Promise<void> {
    const { known, executor, logger, nodeId } = this.options;
    const open: string[] = [];
    for (const id of known.ids()) {
      const entry = known.get(id)!;
      if (entry.delivered) continue;
      if (entry.final) this.resend(entry.final);
      else open.push(id);
    }
    const report = await executor.reconcile(open);
    for (const { execution, wasRunning } of report.adopted) {
      logger.info(
        { executionId: execution.executionId, wasRunning },
        "adopted an execution's container after a restart",
      );
      this.follow(execution, false);
      const cancelled = known.get(execution.executionId)?.cancelled;
      if (cancelled !== undefined) void this.cancel(execution.executionId, cancelled);
    }
    for (const id of report.missing) {
      const cancelled = known.get(id)?.cancelled;
      if (cancelled !== undefined) {
        this.finish(id, notRunHere(id, nodeId));
        continue;
      }
      logger.warn(
        { executionId: id },
        "an execution this node had taken has no container after a restart; reporting it failed",
      );
      this.options.observer?.executionFailed("lost");
      this.finish(id, {
        Type: "ExecutionFailed",
        ExecutionID: id,
        Reason: reason(`execution ${id} was lost: node ${nodeId} restarted and its container was gone`),
        Cause: "lost",
      });
    }
  }

  private sealed(body: ReportBody): ExecutionReport {
    return { ...body, MessageID: randomUUID(), NodeID: this.options.nodeId } as ExecutionReport;
  }

  private report(body: ReportBody): void {
    this.queue(this.sealed(body), false);
  }

  /** An end: forgotten once the orchestrator has answered it. */
  private resend(final: ExecutionReport): void {
    this.queue(final, true);
  }

  private queue(report: ExecutionReport, isFinal: boolean): void {
    const id = report.ExecutionID;
    const key = isFinal ? `final:${report.MessageID}` : report.Type;
    const waiting = this.waiting.get(id) ?? new Set<string>();
    // The same report already waits its turn: it says what this one would.
    if (waiting.has(key)) return;
    waiting.add(key);
    this.waiting.set(id, waiting);
    const next = (this.chains.get(id) ?? Promise.resolve()).then(async () => {
      waiting.delete(key);
      if (waiting.size === 0 && this.waiting.get(id) === waiting) this.waiting.delete(id);
      const delivered = await this.deliver(report);
      if (delivered && isFinal && this.options.known.get(id)?.final?.MessageID === report.MessageID)
        this.options.known.delivered(id);
    });
    this.chains.set(id, next);
    void next.finally(() => {
      if (this.chains.get(id) === next) this.chains.delete(id);
    });
  }

  /**
   * Sends until answered: true when the orchestrator answered (accepted or refused for good), false when stopped first.
   */
  private async deliver(report: ExecutionReport): Promise<boolean> {
    let wait = this.options.retryMs ?? 500;
    const maxWait = this.options.maxRetryMs ?? 30_000;
    while (!this.stopped) {
      let notBefore = 0;
      try {
        const response = await this.options.send(report);
        if (response.Accepted) return true;
        if (response.Code !== "Unavailable") {
          this.options.logger.warn(
            { executionId: report.ExecutionID, type: report.Type, reason: response.Reason, code: response.Code },
            "orchestrator refused an execution report",
          );
          return true;
        }
        notBefore = (response.RetryAfter ?? 0) * 1000;
      } catch (e) {
        if (this.stopped) return false;
        this.options.logger.warn(
          { executionId: report.ExecutionID, type: report.Type, reason: (e as Error).message, retryInMs: wait },
          "execution report not delivered; will retry",
        );
      }
      await this.sleep(Math.max(wait, notBefore));
      wait = Math.min(wait * 2, maxWait);
    }
    return false;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleeps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleeps.add(wake);
    });
  }

  /** Executions running now and their resources are the executor's; this stops sending (undelivered ends stay kept). */
  stop(): void {
    this.stopped = true;
    for (const wake of [...this.sleeps]) wake();
  }
}

const isExecutionId = (id: string) => {
  try {
    validate(ExecutionID, id);
    return true;
  } catch {
    return false;
  }
};

/** The answer to a cancel of an execution with no container here. */
function notRunHere(executionId: string, nodeId: string): ReportBody {
  return {
    Type: "ExecutionFailed",
    ExecutionID: executionId,
    Reason: reason(`execution ${executionId} was cancelled: it does not run on node ${nodeId}`),
    Cause: "cancelled",
  };
}

function rejected(executionId: string, error: ShoalError, answers: "AskForBid" | "RunExecution"): ReportBody {
  return {
    Type: "BidRejected",
    ExecutionID: executionId,
    Reason: reason(error.message),
    Code: error.kind,
    Answers: answers,
  };
}

const noop = (): void => {};
