import type { Logger } from "pino";
import type { Clock } from "../../actors/clock.ts";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { NodeWorkClient } from "../../transport/node-work-client.ts";
import { RESEND_MS } from "./work-resends.ts";

/** How many more times a node that came back is told to stop what was lost with it. */
export const STOP_RESENDS = 2;

export interface LostWorkStopsOptions {
  readonly work: Pick<NodeWorkClient, "cancelExecution">;
  /** The orchestrator's one deadline heap: each telling again is a deadline in it, on `clock`. */
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Tells a node that is back (HEALTHY again, approved again) to stop the executions lost with it:
 * they may still run there (nothing told it while it was away), and it may not listen yet, as it
 * has only just come back. So it is told now and STOP_RESENDS more times, RESEND_MS of the
 * orchestrator's clock apart, each a deadline in the one heap.
 */
export class LostWorkStops {
  /** The deadline keys of the tellings still to come. */
  private readonly pending = new Set<string>();
  /** Each return its own chain: a node back again soon after is told about what it lost since, on its own count. */
  private returns = 0;
  private stopped = false;

  constructor(private readonly options: LostWorkStopsOptions) {}

  /** Tells `nodeId` to stop `executionIds` now (a publish that throws is the caller's), and again later. */
  tell(nodeId: string, executionIds: readonly string[]): void {
    if (executionIds.length === 0) return;
    const { work, deadlines, clock, logger } = this.options;
    const reason = `the orchestrator gave this execution up while node ${nodeId} was away`;
    const key = `lost-work-stop:${nodeId}:${this.returns++}`;
    const send = () => {
      for (const id of executionIds) work.cancelExecution(nodeId, id, reason);
    };
    const again = (left: number) => {
      if (this.stopped || left === 0) return;
      this.pending.add(key);
      deadlines.set(key, clock.now() + RESEND_MS, () => {
        this.pending.delete(key);
        // Fired by the heap: a throw here would strand every deadline after it.
        try {
          send();
        } catch (err) {
          logger.warn({ err, nodeId }, "telling a node again to stop the executions lost with it failed");
        }
        again(left - 1);
      });
    };
    send();
    again(STOP_RESENDS);
    logger.info(
      { nodeId, executions: executionIds },
      "a node that came back is told to stop the executions lost with it",
    );
  }

  /** No more tellings (the orchestrator stops). */
  stop(): void {
    this.stopped = true;
    for (const key of this.pending) this.options.deadlines.cancel(key);
    this.pending.clear();
  }
}
