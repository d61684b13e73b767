import { unavailable } from "../../errors/shoal-error.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import { READ_YOUR_WRITES_TIMEOUT_MS } from "../read-your-writes-timeout.ts";

/**
 * Read-your-writes on the job read model for the job runner: per job, the highest store position the runner's commands
 * appended for it, and a wait for the read model to have folded that (and a step's cause) before the job is evaluated
 * from it. Per job, so that evaluating one job never waits for the read model to fold another job's writes: a job's
 * evaluation reads only its own executions from the read model, and the capacity other jobs hold is in the runner's
 * ledger from the moment they were planned (ExecutionLedger.reserve), not from the read model's fold of their Creates.
 * Numbers, not a memory of what was created: the read model is the one source of a job's executions, and after a
 * restart the start-up waits for it to fold the whole store anyway.
 */
export class JobViewsWrites {
  private readonly appended = new Map<string, number>();
  /** The highest position appended for any job: what a caller without a job waits for. */
  private highest = 0;
  /** A position the read model is known to have folded: marks at or below it need no wait, and are dropped. */
  private folded = 0;
  /** The number of marks kept after the last time folded ones were dropped. */
  private kept = 0;

  constructor(
    private readonly progress: Pick<ProcessorProgress, "waitFor">,
    private readonly timeoutMs = READ_YOUR_WRITES_TIMEOUT_MS,
  ) {}

  /** A command of the runner stored events of `jobId` up to `position` (undefined: it stored nothing). */
  wrote(jobId: string, position: number | undefined): void {
    if (position === undefined || position <= this.folded) return;
    if (position > (this.appended.get(jobId) ?? 0)) this.appended.set(jobId, position);
    if (position > this.highest) this.highest = position;
    // Dropped now and then, not per wait: the map stays about as large as the jobs with writes not yet folded.
    if (this.appended.size > 2 * this.kept + 64) this.dropFolded();
  }

  /**
   * Resolves once the read model has folded everything the runner appended so far for `jobId`, and the event at
   * `cause` (a workflow step's input). A read model that does not get there in time is the orchestrator's trouble,
   * never the job's: the failure is Unavailable, so a workflow step is tried again rather than ending its job.
   */
  caughtUp(jobId: string, cause?: number): Promise<void> {
    return this.waitFor(Math.max(this.appended.get(jobId) ?? 0, cause ?? 0));
  }

  /** caughtUp for a caller that reads across jobs (a node's executions): everything the runner appended for any job. */
  caughtUpAll(cause?: number): Promise<void> {
    return this.waitFor(Math.max(this.highest, cause ?? 0));
  }

  private async waitFor(position: number): Promise<void> {
    if (position <= this.folded) return;
    try {
      await this.progress.waitFor(position, this.timeoutMs);
    } catch (err) {
      throw unavailable(`the job read model has not caught up: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (position > this.folded) this.folded = position;
  }

  private dropFolded(): void {
    for (const [jobId, position] of this.appended) if (position <= this.folded) this.appended.delete(jobId);
    this.kept = this.appended.size;
  }
}
