import type { Logger } from "pino";
import type { ExecutionCommand, ExecutionRefusal } from "../../../machines/execution/execution-commands.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { JobCommand, JobRefusal } from "../../../machines/job/job-commands.ts";
import type { JobState } from "../../../machines/job/job-state.ts";
import type { CommandContext } from "../../actors/command-context.ts";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { EntityRegistry } from "../../actors/entity-registry.ts";
import type { ExecutionEvent } from "../../events/catalog/execution-events.ts";
import type { JobEvent } from "../../events/catalog/job-events.ts";
import type { FollowUp, JobPlan } from "../../scheduler/job-plan.ts";
import type { WorkClient } from "../../transport/node-work-client.ts";
import { isTransientFailure } from "../transient-failure.ts";

/** Where a job's plan is carried out: its actors, the nodes' work subjects, the one deadline scheduler. */
export interface JobPlanTarget {
  readonly jobs: EntityRegistry<JobState, JobCommand, JobEvent, JobRefusal>;
  readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;
  readonly work: WorkClient;
  readonly deadlines: DeadlineScheduler;
  readonly logger: Logger;
}

/** One plan's job and the step that evaluated it. */
export interface JobPlanStep {
  readonly jobId: string;
  /** The evaluation's context: who acts, why, in answer to what. */
  readonly context: CommandContext;
  /** The same with another reason (a retry's or a replacement's Create). */
  readonly because: (reason: string) => CommandContext;
  /** The store position of what a command of the plan appended (the read model is waited for up to it). */
  readonly wrote: (position: number | undefined) => void;
  /**
   * These Creates of the plan were certainly not stored (one was refused, which stops the rest; or they came after one
   * whose outcome is unknown): what was reserved for them when the plan was made is given back.
   */
  readonly abandoned?: (executionIds: readonly string[]) => void;
  /** One of the plan's Creates was stored now (not one a replayed step finds stored already). */
  readonly placed?: () => void;
  /** The job evaluated again, as a follow-up comes due. */
  readonly evaluateAgain: (reason: string) => Promise<void>;
}

/** The deadline key of a job's follow-up of one kind: at most one of each per job is armed. */
export const followUpKey = (jobId: string, kind: "exec-limit" | "top-up"): string => `job-placement/${jobId}/${kind}`;

/**
 * Issues a job's plan (evaluateJob, jobEndPlan) through the registries, in the plan's order. Every command is
 * idempotent where it lands: a replayed step finds the executions it created and creates none again.
 */
export async function applyJobPlan(target: JobPlanTarget, plan: JobPlan, step: JobPlanStep): Promise<void> {
  const { jobs, executions, work, logger } = target;
  const { jobId, context } = step;
  // The rest of a rate-limited job is placed by the next evaluation, whatever this one still has to do (should the
  // orchestrator stop first, the start's placement pass picks the job up).
  if (plan.again) arm(target, step, "exec-limit", plan.again, "placing the rest of a rate-limited job failed");
  // An earlier version's execution is stopped before its replacement is created: its node hears the stop first, and
  // waits for it to free the room the new one needs.
  for (const c of plan.cancel) {
    step.wrote((await executions.execute(c.executionId, { type: "Cancel", reason: c.reason }, context)).position);
    work.cancelExecution(c.nodeId, c.executionId, c.reason.slice(0, 1024));
  }
  for (const [i, c] of plan.create.entries()) {
    try {
      // A replayed step finds the execution it created the first time: nothing to do again.
      if ((await executions.get(c.executionId)).state.computeState !== undefined) continue;
      const because = c.reason === undefined ? context : step.because(c.reason);
      step.wrote((await executions.execute(c.executionId, c.command, because)).position);
      step.placed?.();
    } catch (err) {
      // Unavailable may come after the store took the Create (its answer was what got lost): that one keeps its
      // reservation, which the read model's fold replaces if it was stored and the step, tried again, reuses if not.
      // Given back, it could be booked by another job before the fold, and the node would hold both.
      step.abandoned?.(plan.create.slice(isTransientFailure(err) ? i + 1 : i).map((d) => d.executionId));
      throw err;
    }
  }
  for (const line of plan.log) logger[line.level](line.fields, line.message);
  for (const command of plan.job) step.wrote((await jobs.execute(jobId, command, context)).position);
  if (plan.topUp) arm(target, step, "top-up", plan.topUp, "placing a job placed in part again failed");
}

/** A follow-up already armed for the job stays as it is: it evaluates everything then. */
function arm(
  target: JobPlanTarget,
  step: JobPlanStep,
  kind: "exec-limit" | "top-up",
  followUp: FollowUp,
  failure: string,
): void {
  const key = followUpKey(step.jobId, kind);
  if (target.deadlines.has(key)) return;
  target.deadlines.set(key, followUp.at, () => {
    step
      .evaluateAgain(followUp.reason)
      .catch((err: unknown) => target.logger.error({ err, jobId: step.jobId }, failure));
  });
}
