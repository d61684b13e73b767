import type { Logger } from "pino";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { Clock } from "../../actors/clock.ts";
import type { ExecutionWork, WorkClient } from "../../transport/node-work-client.ts";
import { cancelResentUntil } from "./cancel-resent-until.ts";
import type { WorkResends } from "./work-resends.ts";

export interface ResendingWorkClientOptions {
  /** Where the messages go (NodeWorkClient). */
  readonly wire: WorkClient;
  /** The orchestrator's chains of work sent again (shared with WorkDispatch). */
  readonly resends: WorkResends;
  readonly clock: Pick<Clock, "now">;
  readonly logger: Logger;
  /** How long a cancel is sent again at most: the node's answer bound (ExecutionAnswerTimeout). */
  readonly answerTimeoutMs: number;
}

/**
 * The work client whose CancelExecution is sent like RunExecution: a cancel published while its node does not listen
 * (it restarts, its subscription is not back yet) is dropped by NATS, and the node would adopt the container and run
 * it on for good. So a cancel goes again every RESEND_MS of the orchestrator's clock (WorkResends) until the node
 * reports the execution ended (a node answers every cancel with the end, once the container is gone, or with "does not
 * run here"), or until the answer bound passes.
 */
export class ResendingWorkClient implements WorkClient {
  constructor(private readonly options: ResendingWorkClientOptions) {}

  askForBid(work: ExecutionWork): string {
    return this.options.wire.askForBid(work);
  }

  runExecution(work: ExecutionWork): string {
    return this.options.wire.runExecution(work);
  }

  /** Sent now (a publish that throws is the caller's) and again until the node reports the execution ended. */
  cancelExecution(nodeId: string, executionId: string, reason: string): string {
    const messageId = this.options.wire.cancelExecution(nodeId, executionId, reason);
    this.keepCancelling(nodeId, executionId, reason, this.options.clock.now());
    return messageId;
  }

  /** Its node reported the execution ended (its end, or that it does not run there): no more cancels. */
  ended(executionId: string): void {
    this.options.resends.end("CancelExecution", executionId);
  }

  /**
   * After a restart: the cancels being sent again when the orchestrator stopped died with it. Each execution whose node
   * is still owed one (cancelResentUntil: the orchestrator ended it within the answer bound) is cancelled on its node
   * now, and again until the node answers or that bound passes; one already being sent is left to its chain. Read-model
   * states pick them, so no actor is loaded. Returns how many.
   */
  resume(executions: Iterable<ExecutionState>): number {
    const { wire, resends, clock, logger, answerTimeoutMs } = this.options;
    const now = clock.now();
    let resumed = 0;
    for (const e of executions) {
      const until = cancelResentUntil(e, answerTimeoutMs);
      if (until === undefined || until <= now || resends.has("CancelExecution", e.executionId)) continue;
      const reason = e.computeMessage.slice(0, 1024);
      try {
        wire.cancelExecution(e.nodeId, e.executionId, reason);
      } catch (err) {
        // Its chain tries again.
        logger.warn({ err, executionId: e.executionId }, "sending CancelExecution again after a restart failed");
      }
      this.keepCancelling(e.nodeId, e.executionId, reason, until - answerTimeoutMs);
      resumed++;
    }
    return resumed;
  }

  /** Sends the cancel again until the node answers or the answer bound, counted from `since`, passes. */
  private keepCancelling(nodeId: string, executionId: string, reason: string, since: number): void {
    const resend = () => {
      this.options.wire.cancelExecution(nodeId, executionId, reason);
      return true;
    };
    this.options.resends.keep("CancelExecution", executionId, resend, true, since + this.options.answerTimeoutMs);
  }
}
