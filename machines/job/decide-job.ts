import { accept, refuse, type Decision } from "../decider.ts";
import type { JobEvent, JobEventType } from "../../src/events/catalog/job-events.ts";
import { isJobId } from "./job-id.ts";
import { goDuration } from "./go-duration.ts";
import { jobChartIndex, jobTransitions } from "./job-chart.ts";
import type { JobCommand, JobCommandType, JobRefusal } from "./job-commands.ts";
import { queueDeadline, totalDeadline } from "./job-deadlines.ts";
import { taskOf } from "./job-spec.ts";
import type { JobState } from "./job-state.ts";
import { decideRerun, decideUpdate } from "./decide-next-version.ts";
import { invalidJob } from "./spec-fields.ts";

export type JobDecision = Decision<JobEvent, JobRefusal>;

/** The state a command would move the job to (for Bacalhau's ErrJobAlreadyTerminal message). */
const TARGET = { Queue: "Queued", Run: "Running", Complete: "Completed", Fail: "Failed", Stop: "Stopped" } as const;

/** The event each command causes: what the chart is asked about before anything else is checked. */
const CAUSES: Readonly<Record<JobCommandType, JobEventType>> = {
  Submit: "JobSubmitted",
  Put: "JobUpdated",
  Rerun: "JobRerun",
  Queue: "JobQueued",
  HoldUpdate: "JobUpdateHeld",
  ResumeUpdate: "JobUpdateResumed",
  Run: "JobStarted",
  Complete: "JobCompleted",
  Fail: "JobFailed",
  Stop: "JobStopped",
  TimeOutQueue: "JobFailed",
  TimeOutJob: "JobFailed",
};

/**
 * Whether a command may happen now: the chart takes the event it causes, or the command repeats
 * where the job already is (Stop on a Stopped job, Run on a Running one), which is legal and
 * writes nothing so that workflows may issue it again. A second submission is no repeat but a
 * conflict. Long-running jobs run until stopped (Bacalhau: a service or daemon job never
 * completes), and a queue timeout concerns a queued job only: checks on data, not on the chart.
 */
function isLegal(command: JobCommand, state: JobState): boolean {
  const from = jobChartIndex(state);
  const event = CAUSES[command.type];
  if (command.type !== "Submit" && jobTransitions.leadsTo(event).has(from)) return true;
  if (command.type === "Complete" && (state.spec?.Type === "service" || state.spec?.Type === "daemon")) return false;
  if (command.type === "TimeOutQueue" && state.state !== "Queued") return false;
  return jobTransitions.allows(from, event);
}

/** Why a user's or a workflow's command is not legal in this state (the statechart says only that it is not). */
function refusal(command: JobCommand, state: JobState): JobRefusal {
  const { jobId } = state;
  if (state.state === undefined || state.spec === undefined)
    return { code: "NotFound", message: `job not found: ${jobId}` };
  switch (command.type) {
    case "Submit":
      return { code: "Conflict", message: `job ${jobId} already exists` };
    case "Stop":
      // Bacalhau's StopJob: a Completed job "cannot" be stopped; a Failed one hits the store's terminal check.
      if (state.state === "Completed") return { code: "Conflict", message: "cannot stop job in state Completed" };
      break;
    case "Complete":
      if (state.spec.Type === "service" || state.spec.Type === "daemon") {
        return {
          code: "Conflict",
          message: `job ${jobId} is a ${state.spec.Type} job: it runs until stopped and never completes`,
        };
      }
      break;
    default:
      break;
  }
  const target = command.type in TARGET ? TARGET[command.type as keyof typeof TARGET] : command.type;
  return {
    code: "Conflict",
    message: `job ${jobId} is in terminal state ${state.state} and cannot transition to ${target}`,
  };
}

/**
 * Commands that no longer apply once the job moved on (a deadline passing, an update's hold or resumption reaching an
 * ended job): no-ops, never refusals.
 */
const MOOT_WHEN_ILLEGAL: ReadonlySet<JobCommandType> = new Set([
  "TimeOutQueue",
  "TimeOutJob",
  "HoldUpdate",
  "ResumeUpdate",
]);

/**
 * The job's rules: given a command and the job's state, which events happen, or why not. Whether
 * a command may happen at all comes from the chart (`isLegal`); a repeat of what
 * already happened writes nothing; deadline commands that no longer apply (the job moved on) are
 * no-ops, never refusals.
 */
export function decideJob(command: JobCommand, state: JobState, now: number): JobDecision {
  const { jobId } = state;
  if (command.type === "Put" || command.type === "Rerun") {
    const { spec, state: current } = state;
    if (spec === undefined || current === undefined) {
      if (command.type === "Rerun") return refuse(refusal(command, state));
      const token = command.type === "Put" && command.token !== undefined ? { token: command.token } : {};
      return decideJob({ type: "Submit", submission: command.submission, ...token }, state, now);
    }
    const job = { ...state, spec, state: current };
    return command.type === "Put" ? decideUpdate(command, job) : decideRerun(command, job);
  }
  if (!isLegal(command, state))
    return MOOT_WHEN_ILLEGAL.has(command.type) ? accept([]) : refuse(refusal(command, state));

  if (command.type === "Submit") {
    if (!isJobId(jobId))
      return refuse({ code: "Conflict", message: `a job's id is j-<uuid>, not ${JSON.stringify(jobId)}` });
    const { submission } = command;
    if (!submission.ok) return refuse(invalidJob(submission.problems));
    return accept(
      [
        {
          type: "JobSubmitted",
          data: {
            JobID: jobId,
            Job: submission.spec,
            Version: 1,
            Warnings: submission.warnings,
            ...(command.token === undefined ? {} : { IdempotencyToken: command.token }),
          },
        },
      ],
      "job submitted",
    );
  }

  // Legal and past Submit: the job exists and is not terminal, or the command repeats its terminal state.
  const current = state.state;
  const spec = state.spec;
  if (current === undefined || spec === undefined) return refuse(refusal(command, state));
  if (current === "Completed" || current === "Failed" || current === "Stopped") return accept([]);
  const Previous = current;

  switch (command.type) {
    case "Queue": {
      // Bacalhau's daemon scheduler neither queues nor fails a job for want of nodes: it stays as it is and runs on
      // each node that comes.
      if (spec.Type === "daemon") return accept([], "a daemon job waits for matching nodes");
      // Bacalhau: past the QueueTimeout (Shoal: counted from the current version's start; 0 means no queueing) the
      // job fails with the reason.
      if (now >= queueDeadline(state))
        return accept([
          { type: "JobFailed", data: { JobID: jobId, Previous, Cause: "Scheduling", Message: command.reason } },
        ]);
      // Each evaluation of a queued job asks again: only a new count of executions lacking is worth an event (the
      // reason's per-node capacities change with every other job, and would be an event each).
      if (current === "Queued" && (command.wanted === undefined || command.wanted === state.queueWanted))
        return accept([]);
      const wanted = command.wanted === undefined ? {} : { Wanted: command.wanted };
      return accept([{ type: "JobQueued", data: { JobID: jobId, Previous, Reason: command.reason, ...wanted } }]);
    }
    // Each evaluation of a held update asks again: only a changed reason is worth an event.
    case "HoldUpdate":
      if (state.heldReason === command.reason) return accept([]);
      return accept([
        { type: "JobUpdateHeld", data: { JobID: jobId, Previous, Version: state.version, Reason: command.reason } },
      ]);
    case "ResumeUpdate":
      if (state.heldReason === "") return accept([]);
      return accept([{ type: "JobUpdateResumed", data: { JobID: jobId, Previous, Version: state.version } }]);
    case "Run":
      return current === "Running" ? accept([]) : accept([{ type: "JobStarted", data: { JobID: jobId, Previous } }]);
    case "Complete":
      return accept([{ type: "JobCompleted", data: { JobID: jobId, Previous } }]);
    case "Fail":
      return accept([
        { type: "JobFailed", data: { JobID: jobId, Previous, Cause: "Scheduling", Message: command.reason } },
      ]);
    case "Stop":
      return accept([{ type: "JobStopped", data: { JobID: jobId, Previous, Reason: command.reason } }]);
    case "TimeOutQueue": {
      const timeout = taskOf(spec).Timeouts.QueueTimeout;
      if (now < queueDeadline(state)) return accept([]);
      const message =
        state.queueReason !== ""
          ? state.queueReason
          : `job could not be placed within its queue timeout of ${goDuration(timeout)}`;
      return accept([{ type: "JobFailed", data: { JobID: jobId, Previous, Cause: "QueueTimeout", Message: message } }]);
    }
    case "TimeOutJob": {
      const at = totalDeadline(state);
      if (at === undefined || now < at) return accept([]);
      const message = `Job timed out. Job took longer than ${goDuration(taskOf(spec).Timeouts.TotalTimeout)}`;
      return accept([{ type: "JobFailed", data: { JobID: jobId, Previous, Cause: "TotalTimeout", Message: message } }]);
    }
  }
}
