import type { ExecutionCommand } from "../../machines/execution/execution-commands.ts";
import type { JobCommand } from "../../machines/job/job-commands.ts";
import type { CapacityLedger } from "./capacity-ledger.ts";

/** A new execution: its id (derived, so that a replayed evaluation makes the same) and its Create, every field set. */
export interface ExecutionToCreate {
  readonly executionId: string;
  readonly command: Extract<ExecutionCommand, { readonly type: "Create" }>;
  /** Its Create's reason when not the evaluation's own: a retry of, or a replacement for, its previousExecution. */
  readonly reason?: string;
}

/** An execution under way to cancel, its node to be told to stop it, with Bacalhau's reason. */
export interface ExecutionToCancel {
  readonly executionId: string;
  readonly nodeId: string;
  readonly reason: string;
}

/** What an evaluation asks of the job itself. */
export type JobPlanCommand = Extract<
  JobCommand,
  { readonly type: "Run" | "Queue" | "Fail" | "Complete" | "HoldUpdate" | "ResumeUpdate" }
>;

/** A line the evaluation is worth in the log. */
export interface PlanLog {
  readonly level: "info" | "debug";
  readonly fields: Readonly<Record<string, unknown>>;
  readonly message: string;
}

/** When the job is to be evaluated again (ms since the epoch), and why that evaluation runs. */
export interface FollowUp {
  readonly at: number;
  readonly reason: string;
}

/**
 * What one evaluation of a job decided (Nomad's plan; applyJobPlan is its applier), carried out in this order: `again`
 * is armed, the executions cancelled (an earlier version's, before their replacements), then created, the log lines
 * written, the job's commands issued, `topUp` armed. A command that fails stops what follows it.
 */
export interface JobPlan {
  readonly create: readonly ExecutionToCreate[];
  readonly cancel: readonly ExecutionToCancel[];
  /** Run, Queue, Fail, Complete, HoldUpdate or ResumeUpdate, in order. */
  readonly job: readonly JobPlanCommand[];
  readonly log: readonly PlanLog[];
  /**
   * The rate limit left placements, or an earlier version's running executions to stop, for the next evaluation
   * (Bacalhau's `exec-limit` trigger).
   */
  readonly again?: FollowUp;
  /** Placed in part: evaluated again once its QueueTimeout passed, when it fails if still short. */
  readonly topUp?: FollowUp;
}

/** An evaluation's plan, with the capacity held once its executions are created: the next placement's ledger. */
export interface PlacementPlan extends JobPlan {
  readonly ledger: CapacityLedger;
}

export const EMPTY_PLAN: JobPlan = { create: [], cancel: [], job: [], log: [] };
