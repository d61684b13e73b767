import type { EventEnvelope } from "../event-envelope.ts";
import { JobViews } from "../jobs/job-views.ts";
import type { FoldedModel } from "./as-of-folds.ts";

/** The job read model (jobs, their executions, the jobs' index) as the job module folds it. */
export class JobReadModel implements FoldedModel {
  readonly views = new JobViews();

  handle(envelope: EventEnvelope): void {
    this.views.handleEnvelope(envelope);
  }
}
