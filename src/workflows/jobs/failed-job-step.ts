import { isTerminalJobState } from "../../../machines/job/job-state.ts";
import { commandContext } from "../../actors/command-context.ts";
import type { IssuedCommand, WorkflowCommand } from "../workflow.ts";
import { APPROVAL, DISPATCH, JOBS_ACTOR, PLACEMENT, SETTLE } from "./job-flow.ts";
import type { JobRunnerOptions } from "./job-runner.ts";

/** Compute states an execution ends in. */
const ENDED = new Set(["Completed", "Failed", "Cancelled", "BidRejected", "AskForBidRejected"]);

/**
 * The job flow's `endEntity`: a step that failed for its entity's data ends that entity with the
 * reason. A job's placement fails the job; an execution's dispatch, approval or settling fails the
 * execution (the orchestrator's cause: its node did nothing wrong) and its job. A pass over every
 * queued job ends nobody here (each job's own failure ends that job), nor does cancelling the
 * executions of a job that has ended.
 */
/** A job flow command, as the workflow host issued it or as the runner makes one outside it (a resend). */
type JobStep = WorkflowCommand & Partial<Pick<IssuedCommand, "causationId" | "correlationId">>;

export function endFailedJobStep(options: Pick<JobRunnerOptions, "jobs" | "executions">) {
  const failJob = async (jobId: string, reason: string, c: JobStep) => {
    const job = (await options.jobs.get(jobId)).state;
    if (job.state === undefined || isTerminalJobState(job.state)) return;
    await options.jobs.execute(jobId, { type: "Fail", reason }, contextOf(c, reason));
  };
  return async (c: JobStep, reason: string): Promise<void> => {
    if (c.handler === PLACEMENT && c.type === "PlaceJob") return failJob(c.entityId, reason, c);
    if (c.handler !== DISPATCH && c.handler !== APPROVAL && c.handler !== SETTLE) return;
    const execution = (await options.executions.get(c.entityId)).state;
    if (execution.computeState !== undefined && !ENDED.has(execution.computeState)) {
      const fail = { type: "Fail", reason, cause: "Orchestrator" } as const;
      await options.executions.execute(c.entityId, fail, contextOf(c, reason));
    }
    if (execution.jobId !== "") await failJob(execution.jobId, reason, c);
  };
}

function contextOf(c: JobStep, reason: string) {
  // Steps outside the recorded workflow (a queue backoff) have no cause of their own.
  const cause = c.causationId ? { causationId: c.causationId } : {};
  const correlation = c.correlationId ? { correlationId: c.correlationId } : {};
  return commandContext(JOBS_ACTOR, { reason, ...cause, ...correlation });
}
