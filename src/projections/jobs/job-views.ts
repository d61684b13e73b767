import { evolveExecution } from "../../../machines/execution/evolve-execution.ts";
import { initialExecutionState, type ExecutionState } from "../../../machines/execution/execution-state.ts";
import { evolveJob } from "../../../machines/job/evolve-job.ts";
import { initialJobState, type JobState } from "../../../machines/job/job-state.ts";
import { decodeExecutionEvent } from "../../events/catalog/execution-event-codec.ts";
import { decodeJobEvent } from "../../events/catalog/job-event-codec.ts";
import type { RecordedEvent } from "../../events/store/event-store.ts";
import { EXECUTION_CATEGORY, JOB_CATEGORY, categoryOf, entityIdOf } from "../../events/streams.ts";
import type { EventEnvelope } from "../event-envelope.ts";
import { JobIndex } from "./job-index.ts";

/**
 * Every job and execution as its stream describes it, folded in store order with the deciders'
 * own evolve (the actor's fold: the two can never drift), and the jobs indexed for the list.
 * Fed by the processor host's one subscription.
 */
export class JobViews {
  private readonly jobs = new Map<string, JobState>();
  private readonly executions = new Map<string, ExecutionState>();
  /** Execution ids per job, in creation order. */
  private readonly executionsOf = new Map<string, string[]>();
  readonly index = new JobIndex();

  handleEnvelope = (envelope: EventEnvelope): void => this.handle(envelope.recorded);

  handle = (recorded: RecordedEvent): void => {
    const category = categoryOf(recorded.stream);
    if (category === JOB_CATEGORY) {
      const jobId = entityIdOf(recorded.stream);
      const before = this.jobs.get(jobId);
      const after = evolveJob(before ?? initialJobState(jobId), decodeJobEvent(recorded), recorded.time);
      if (after === before || after.state === undefined) return;
      this.jobs.set(jobId, after);
      this.index.update(before, after);
    } else if (category === EXECUTION_CATEGORY) {
      const executionId = entityIdOf(recorded.stream);
      const before = this.executions.get(executionId);
      const after = evolveExecution(before ?? initialExecutionState(executionId), decodeExecutionEvent(recorded), recorded.time);
      if (after === before || after.computeState === undefined) return;
      this.executions.set(executionId, after);
      if (!before) {
        const list = this.executionsOf.get(after.jobId);
        if (list) list.push(executionId);
        else this.executionsOf.set(after.jobId, [executionId]);
      }
    }
  };

  job(jobId: string): JobState | undefined {
    return this.jobs.get(jobId);
  }

  execution(executionId: string): ExecutionState | undefined {
    return this.executions.get(executionId);
  }

  /** The job's executions, oldest first. */
  executionsOfJob(jobId: string): ExecutionState[] {
    return (this.executionsOf.get(jobId) ?? []).map((id) => this.executions.get(id) as ExecutionState);
  }

  allJobs(): IterableIterator<JobState> {
    return this.jobs.values();
  }

  allExecutions(): IterableIterator<ExecutionState> {
    return this.executions.values();
  }
}
