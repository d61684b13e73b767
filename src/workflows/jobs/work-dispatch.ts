import type { Logger } from "pino";
import type { ExecutionCommand, ExecutionRefusal } from "../../../machines/execution/execution-commands.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { JobCommand, JobRefusal } from "../../../machines/job/job-commands.ts";
import { isTerminalJobState, type JobState } from "../../../machines/job/job-state.ts";
import type { EntityRegistry } from "../../actors/entity-registry.ts";
import type { ExecutionEvent } from "../../events/catalog/execution-events.ts";
import type { JobEvent } from "../../events/catalog/job-events.ts";
import type { NodeWorkClient } from "../../transport/node-work-client.ts";
import { KeyedQueues } from "../keyed-queues.ts";
import { workTaskOf } from "./work-task-of.ts";
import { sendOrEnd } from "./unsendable-work.ts";
import type { WorkResends } from "./work-resends.ts";
import { workToSend } from "./work-to-send.ts";

/** Compute states in which the node may not hold an execution's work yet. */
const NOT_YET_RUNNING = new Set(["New", "AskForBid", "AskForBidAccepted", "BidAccepted"]);

type WorkMessage = "AskForBid" | "RunExecution";

export interface WorkDispatchOptions {
  readonly jobs: EntityRegistry<JobState, JobCommand, JobEvent, JobRefusal>;
  readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;
  readonly work: Pick<NodeWorkClient, "askForBid" | "runExecution">;
  /** The orchestrator's chains of work sent again (shared with the cancels' ResendingWorkClient). */
  readonly resends: WorkResends;
  readonly logger: Logger;
}

/**
 * Sends an execution's work to its node (docs/jobs.md, Dispatch): AskForBid while a batch or
 * service execution waits for its node's bid, RunExecution once it is approved, or at once for
 * an ops or daemon execution (a direct bid). Nothing is answered on the spot, and a node that
 * has only just joined may not listen yet: while the execution still stands where the message
 * found it, the same message goes again (the node answers a repeat with where it stands), every
 * RESEND_MS of the orchestrator's clock, until it is answered or the execution ends (its answer
 * bound, ExecutionAnswerTimeout, ends it if the node never answers). The resends are WorkResends'
 * chains, one per execution for the message it is due now, so a replay, or the resume after a
 * restart, of a message already being sent starts no second one.
 */
export class WorkDispatch {
  /**
   * Sends per execution: those of one execution take turns, so two that arrive together (a replayed step and the
   * resume after a restart) see each other's chain and start one.
   */
  private readonly turns = new KeyedQueues();
  private stopped = false;

  constructor(private readonly options: WorkDispatchOptions) {}

  /** Sends what the execution is due now, and keeps sending it (see the class). */
  async dispatch(executionId: string): Promise<void> {
    await this.send(executionId);
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

  /** Nothing more is sent (the orchestrator stops): a chain's next resend ends it. */
  stop(): void {
    this.stopped = true;
  }

  /**
   * `chain`: the message of the chain this call continues (a resend); undefined for a first send,
   * which starts a chain unless one already sends that message. Whether the chain goes on.
   */
  private send(executionId: string, chain?: WorkMessage): Promise<boolean> {
    return this.turns.run(executionId, () => this.sendNow(executionId, chain));
  }

  private async sendNow(executionId: string, chain?: WorkMessage): Promise<boolean> {
    const { resends } = this.options;
    const execution = (await this.options.executions.get(executionId)).state;
    const due = workToSend(execution);
    if (due === undefined || this.stopped || (chain !== undefined && due !== chain)) return false;
    // Already being sent: that chain sends it.
    if (chain === undefined && resends.has(due, executionId)) return true;
    const job = (await this.options.jobs.get(execution.jobId)).state;
    // An earlier version's execution is being stopped: never sent again (it would carry the later version's spec).
    const outdated = execution.jobVersion < job.version;
    if (job.spec === undefined || job.state === undefined || isTerminalJobState(job.state) || outdated) return false;
    const spec = job.spec;
    // While the orchestrator's own NATS is down a publish would only pile up: the resends go on, the bound waits.
    const withheld = resends.withholding;
    if (!withheld) {
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
      if (!sent) return false;
    }
    if (chain === undefined && !this.stopped) {
      resends.keep(due, executionId, () => this.send(executionId, due), !withheld);
      // One chain per execution: the ask ends once the run is due.
      resends.end(due === "AskForBid" ? "RunExecution" : "AskForBid", executionId);
    }
    return true;
  }
}
