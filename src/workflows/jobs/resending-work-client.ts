import type { Logger } from "pino";
import type { Clock } from "../../actors/clock.ts";
import type { DeadlineKind, DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { ExecutionWork, WorkClient } from "../../transport/node-work-client.ts";
import { RESEND_MS } from "./work-dispatch.ts";

export interface ResendingWorkClientOptions {
  /** Where the messages go (NodeWorkClient). */
  readonly wire: WorkClient;
  /** The orchestrator's one deadline heap: every resend is a deadline in it, on `clock`. */
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long a cancel is sent again at most: the node's answer bound (ExecutionAnswerTimeout). */
  readonly answerTimeoutMs: number;
  /** Whether the orchestrator's own transport is down: then nothing is published (the resends go on). */
  readonly transportDown?: () => boolean;
}

interface Cancel {
  readonly nodeId: string;
  readonly reason: string;
  readonly until: number;
}

/**
 * The work client whose CancelExecution is sent like RunExecution: a cancel published while its node does not listen
 * (it restarts, its subscription is not back yet) is dropped by NATS, and the node would adopt the container and run
 * it on for good. So a cancel goes again every RESEND_MS of the orchestrator's clock until the node reports the
 * execution ended (a node answers every cancel with the end, once the container is gone, or with "does not run here"),
 * or until the answer bound passes. Each resend is a deadline in the one heap, keyed by the execution: one chain each.
 */
export class ResendingWorkClient implements WorkClient {
  private readonly cancels = new Map<string, Cancel>();
  private readonly resends: DeadlineKind;
  private stopped = false;

  constructor(private readonly options: ResendingWorkClientOptions) {
    this.resends = options.deadlines.kind((executionId) => this.resend(executionId));
  }

  askForBid(work: ExecutionWork): string {
    return this.options.wire.askForBid(work);
  }

  runExecution(work: ExecutionWork): string {
    return this.options.wire.runExecution(work);
  }

  /** Sent now (a publish that throws is the caller's) and again until the node reports the execution ended. */
  cancelExecution(nodeId: string, executionId: string, reason: string): string {
    const messageId = this.options.wire.cancelExecution(nodeId, executionId, reason);
    if (!this.stopped) {
      const now = this.options.clock.now();
      this.cancels.set(executionId, { nodeId, reason, until: now + this.options.answerTimeoutMs });
      this.resends.set(executionId, now + RESEND_MS);
    }
    return messageId;
  }

  /** Its node reported the execution ended (its end, or that it does not run there): no more cancels. */
  ended(executionId: string): void {
    if (!this.cancels.delete(executionId)) return;
    this.resends.cancel(executionId);
  }

  /** No more resends (the orchestrator stops). */
  stop(): void {
    this.stopped = true;
    for (const executionId of this.cancels.keys()) this.resends.cancel(executionId);
    this.cancels.clear();
  }

  private resend(executionId: string): void {
    const cancel = this.cancels.get(executionId);
    if (cancel === undefined) return;
    const now = this.options.clock.now();
    if (now >= cancel.until) {
      this.cancels.delete(executionId);
      this.options.logger.warn(
        { executionId, nodeId: cancel.nodeId },
        "a node did not answer CancelExecution within the answer bound; no more cancels are sent",
      );
      return;
    }
    // Fired by the heap: a throw here would strand every deadline after it.
    if (this.options.transportDown?.() !== true) {
      try {
        this.options.wire.cancelExecution(cancel.nodeId, executionId, cancel.reason);
      } catch (err) {
        this.options.logger.warn({ err, executionId }, "sending CancelExecution again failed");
      }
    }
    this.resends.set(executionId, now + RESEND_MS);
  }
}
