import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { JobState } from "../../../machines/job/job-state.ts";
import { ComputeStateName } from "../../events/catalog/execution-events.ts";
import { JobStateName } from "../../events/catalog/job-events.ts";
import { JobType } from "../../events/catalog/job-spec.ts";

const TYPES = JobType.literals;
const STATES = JobStateName.literals;
const EXECUTION_STATES = ComputeStateName.literals;

/**
 * Jobs by (type, state) and executions by state, kept as the job read model folds each change, so
 * /metrics reads them off without a walk over every job. Every pair is reported, 0 where none is:
 * a dashboard's series do not come and go.
 */
export class JobCounts {
  /** Per job type, a count per job state (in STATES' order). */
  private readonly jobs = new Map<string, number[]>(TYPES.map((t) => [t, STATES.map(() => 0)]));
  private readonly executions = EXECUTION_STATES.map(() => 0);

  jobChanged(before: JobState | undefined, after: JobState): void {
    this.moveJob(before, -1);
    this.moveJob(after, 1);
  }

  executionChanged(before: ExecutionState | undefined, after: ExecutionState): void {
    if (before?.computeState !== undefined) this.executions[EXECUTION_STATES.indexOf(before.computeState)]! -= 1;
    if (after.computeState !== undefined) this.executions[EXECUTION_STATES.indexOf(after.computeState)]! += 1;
  }

  private moveJob(job: JobState | undefined, by: 1 | -1): void {
    const counts = job?.spec === undefined ? undefined : this.jobs.get(job.spec.Type);
    if (counts === undefined || job?.state === undefined) return;
    counts[STATES.indexOf(job.state)]! += by;
  }

  jobCounts(): { type: string; state: string; count: number }[] {
    return TYPES.flatMap((type) => STATES.map((state, i) => ({ type, state, count: this.jobs.get(type)![i]! })));
  }

  executionCounts(): { state: string; count: number }[] {
    return EXECUTION_STATES.map((state, i) => ({ state, count: this.executions[i]! }));
  }
}
