import { unavailable } from "../../errors/shoal-error.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import { READ_YOUR_WRITES_TIMEOUT_MS } from "../read-your-writes-timeout.ts";

/**
 * Read-your-writes on the job read model for the job runner: the highest store position its own commands appended,
 * and a wait for the read model to have folded it (and a step's cause) before a job is evaluated from it. One number,
 * not a memory of what was created: the read model is the one source of a job's executions, and after a restart the
 * start-up waits for it to fold the whole store anyway.
 */
export class JobViewsWrites {
  private appended = 0;

  constructor(
    private readonly progress: Pick<ProcessorProgress, "waitFor">,
    private readonly timeoutMs = READ_YOUR_WRITES_TIMEOUT_MS,
  ) {}

  /** A command of the runner's stored its events up to `position` (undefined: it stored nothing). */
  wrote(position: number | undefined): void {
    if (position !== undefined && position > this.appended) this.appended = position;
  }

  /**
   * Resolves once the read model has folded everything the runner appended so far, and the event at `cause` (a
   * workflow step's input). A read model that does not get there in time is the orchestrator's trouble, never the
   * job's: the failure is Unavailable, so a workflow step is tried again rather than ending its job.
   */
  async caughtUp(cause?: number): Promise<void> {
    const position = Math.max(this.appended, cause ?? 0);
    try {
      await this.progress.waitFor(position, this.timeoutMs);
    } catch (err) {
      throw unavailable(`the job read model has not caught up: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
