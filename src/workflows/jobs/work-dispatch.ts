import type { Logger } from "pino";
import type { ExecutionCommand, ExecutionRefusal } from "../../../machines/execution/execution-commands.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { JobCommand, JobRefusal } from "../../../machines/job/job-commands.ts";
import { isTerminalJobState, type JobState } from "../../../machines/job/job-state.ts";
import type { Clock } from "../../actors/clock.ts";
import type { DeadlineKind, DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { EntityRegistry } from "../../actors/entity-registry.ts";
import type { Listening } from "../../actors/listening.ts";
import type { ExecutionEvent } from "../../events/catalog/execution-events.ts";
import type { JobEvent } from "../../events/catalog/job-events.ts";
import type { NodeWorkClient } from "../../transport/node-work-client.ts";
import { KeyedQueues } from "../keyed-queues.ts";
import { workTaskOf } from "./work-task-of.ts";
import { sendOrEnd } from "./unsendable-work.ts";
import { workToSend } from "./work-to-send.ts";

/** Work its node has not answered is sent again this often, until answered or the answer bound ends it. */
export const RESEND_MS = 2_000;
/** Compute states in which the node may not hold an execution's work yet. */
const NOT_YET_RUNNING = new Set(["New", "AskForBid", "AskForBidAccepted", "BidAccepted"]);

type WorkMessage = "AskForBid" | "RunExecution";

export interface WorkDispatchOptions {
  readonly jobs: EntityRegistry<JobState, JobCommand, JobEvent, JobRefusal>;
  readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;
  readonly work: Pick<NodeWorkClient, "askForBid" | "runExecution">;
  /** The orchestrator's one deadline heap: every resend is a deadline in it, on `clock`. */
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Whether the orchestrator's own transport is down: then nothing is published (the resends go on). */
  readonly transportDown?: () => boolean;
  /**
   * When the orchestrator begins to hear its nodes again (start-up over, its transport back): each answer bound counts
   * from then, so a chain whose last send was withheld sends at once rather than up to RESEND_MS into the bound.
   */
  readonly listening?: Pick<Listening, "onResume">;
}

/**
 * Sends an execution's work to its node (docs/jobs.md, Dispatch): AskForBid while a batch or
 * service execution waits for its node's bid, RunExecution once it is approved, or at once for
 * an ops or daemon execution (a direct bid). Nothing is answered on the spot, and a node that
 * has only just joined may not listen yet: while the execution still stands where the message
 * found it, the same message goes again (the node answers a repeat with where it stands), every
 * RESEND_MS of the orchestrator's clock, until it is answered or the execution ends (its answer
 * bound, ExecutionAnswerTimeout, ends it if the node never answers). Each resend is a deadline in
 * the one heap, keyed by the execution: one chain of resends per execution, for the message it is
 * due now, so a replay, or the resume after a restart, of a message already being sent starts no
 * second one.
 */
export class WorkDispatch {
  /** Executions whose work is being sent again, with the message: one chain of resends each. */
  private readonly sending = new Map<string, WorkMessage>();
  /** Each chain's next resend, keyed by its execution. */
  private readonly resends: DeadlineKind;
  /**
   * Sends per execution: those of one execution take turns, so two that arrive together (a replayed step and the
   * resume after a restart) see each other's chain and start one.
   */
  private readonly turns = new KeyedQueues();
  /** Chains whose last send was not published (the transport was down): they send the moment it is back. */
  private readonly withheld = new Set<string>();
  private stopped = false;

  constructor(private readonly options: WorkDispatchOptions) {
    this.resends = options.deadlines.kind((executionId) => this.resend(executionId));
    options.listening?.onResume(() => this.resendWithheld());
  }

  /** Sends what the execution is due now, and keeps sending it (see the class). */
  dispatch(executionId: string): Promise<void> {
    return this.send(executionId);
  }

  /**
   * After a restart: the work of every execution its node may not have yet (not Running, not
   * ended) goes to dispatch again, which sends what its state calls for. The workflow's checkpoint
   * can be past their ExecutionCreated step (saved once the step acted), so no replay sends it,
   * and the resends of the process that died died with it: without this a kill -9 left such an
   * execution New, its job Running, for ever. Read-model states pick them, so a restart with many
   * running executions loads none of their actors.
   */
  resume(executions: Iterable<ExecutionState>): void {
    for (const e of executions) {
      if (!NOT_YET_RUNNING.has(e.computeState ?? "New")) continue;
      this.send(e.executionId).catch((err: unknown) =>
        this.options.logger.warn(
          { err, executionId: e.executionId },
          "sending an execution again after a restart failed",
        ),
      );
    }
  }

  /** No more resends (the orchestrator stops). */
  stop(): void {
    this.stopped = true;
    for (const executionId of this.sending.keys()) this.resends.cancel(executionId);
    this.sending.clear();
    this.withheld.clear();
  }

  /**
   * `chain`: the message of the chain this call continues (a resend); undefined for a first send,
   * which starts a chain unless one already sends that message.
   */
  private send(executionId: string, chain?: WorkMessage): Promise<void> {
    return this.turns.run(executionId, () => this.sendNow(executionId, chain));
  }

  private async sendNow(executionId: string, chain?: WorkMessage): Promise<void> {
    const execution = (await this.options.executions.get(executionId)).state;
    const due = workToSend(execution);
    if (chain !== undefined && due !== chain) return this.endChain(executionId, chain);
    if (due === undefined || this.stopped) return;
    // Already being sent: that chain sends it.
    if (chain === undefined && this.sending.get(executionId) === due) return;
    const job = (await this.options.jobs.get(execution.jobId)).state;
    // An earlier version's execution is being stopped: never sent again (it would carry the later version's spec).
    const outdated = execution.jobVersion < job.version;
    if (job.spec === undefined || job.state === undefined || isTerminalJobState(job.state) || outdated) {
      return this.endChain(executionId, due);
    }
    const spec = job.spec;
    // While the orchestrator's own NATS is down a publish would only pile up: the resends go on, the bound waits.
    const down = this.options.transportDown?.() === true;
    if (!down) {
      const sent = await sendOrEnd(this.options, execution, due, () => {
        const work = {
          nodeId: execution.nodeId,
          executionId,
          jobId: execution.jobId,
          task: workTaskOf(spec, execution),
        };
        if (due === "AskForBid") this.options.work.askForBid(work);
        else this.options.work.runExecution(work);
      });
      if (!sent) return this.endChain(executionId, due);
    }
    // A chain that another took over (the execution moved on meanwhile) or that ended while this resend was under way
    // leaves the deadline to the one that holds it now.
    if (this.stopped || (chain !== undefined && this.sending.get(executionId) !== chain)) return;
    this.sending.set(executionId, due);
    if (down) this.withheld.add(executionId);
    else this.withheld.delete(executionId);
    this.resends.set(executionId, this.options.clock.now() + RESEND_MS);
  }

  private resend(executionId: string): void {
    const chain = this.sending.get(executionId);
    if (chain === undefined) return;
    this.send(executionId, chain).catch((err: unknown) => {
      this.endChain(executionId, chain);
      this.options.logger.warn({ err, executionId }, "sending an execution again failed");
    });
  }

  private endChain(executionId: string, message: WorkMessage): void {
    if (this.sending.get(executionId) !== message) return;
    this.sending.delete(executionId);
    this.withheld.delete(executionId);
    this.resends.cancel(executionId);
  }

  /**
   * The orchestrator hears its nodes again: each chain whose last send was withheld sends now (those published before
   * keep their turn: a node retries its reports until answered, so an answer sent meanwhile still arrives).
   */
  private resendWithheld(): void {
    const now = this.options.clock.now();
    for (const executionId of this.withheld) if (this.resends.has(executionId)) this.resends.set(executionId, now);
  }
}
