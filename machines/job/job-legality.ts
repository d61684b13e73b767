import { setup } from "xstate";
import type { JobType } from "./job-spec.ts";
import type { JobCommandType } from "./job-commands.ts";
import type { JobState } from "./job-state.ts";

const LEGAL = { actions: "legal" } as const;
const IF_IT_COMPLETES = { guard: "completes", actions: "legal" } as const;

/**
 * Which command a job accepts in which state: the legality table of every job command, as a
 * statechart. Transitions carry no target: what a command changes is decided by `decideJob` and
 * folded by `evolveJob`. A command that repeats what already happened (Stop on a Stopped job,
 * Run on a Running one) is legal and changes nothing, so that workflows may issue it again;
 * one that would move a terminal job anywhere else is not. The deadline commands are never
 * refused: where they are not legal they change nothing.
 */
export const jobLegality = setup({
  types: {
    context: {} as { jobType: JobType | undefined },
    events: {} as { type: JobCommandType },
  },
  guards: {
    // Long-running jobs run until stopped (Bacalhau: a service or daemon job never completes).
    completes: ({ context }) => context.jobType === "batch" || context.jobType === "ops",
  },
  actions: { legal: () => undefined },
}).createMachine({
  id: "job",
  context: { jobType: undefined },
  initial: "absent",
  states: {
    absent: { on: { Submit: LEGAL } },
    pending: {
      on: { Queue: LEGAL, Run: LEGAL, Complete: IF_IT_COMPLETES, Fail: LEGAL, Stop: LEGAL, TimeOutJob: LEGAL },
    },
    queued: {
      on: {
        Queue: LEGAL,
        Run: LEGAL,
        Complete: IF_IT_COMPLETES,
        Fail: LEGAL,
        Stop: LEGAL,
        TimeOutQueue: LEGAL,
        TimeOutJob: LEGAL,
      },
    },
    running: {
      on: { Queue: LEGAL, Run: LEGAL, Complete: IF_IT_COMPLETES, Fail: LEGAL, Stop: LEGAL, TimeOutJob: LEGAL },
    },
    completed: { on: { Complete: LEGAL } },
    failed: { on: { Fail: LEGAL } },
    stopped: { on: { Stop: LEGAL } },
  },
});

export type JobStateValue = "absent" | "pending" | "queued" | "running" | "completed" | "failed" | "stopped";

export function jobStateValue(state: JobState): JobStateValue {
  return state.state === undefined ? "absent" : (state.state.toLowerCase() as JobStateValue);
}

const table = new Map<string, boolean>();

/** May this job accept a command of this type now? */
export function isJobCommandLegal(state: JobState, command: JobCommandType): boolean {
  const value = jobStateValue(state);
  const key = `${value}|${state.spec?.Type}|${command}`;
  let legal = table.get(key);
  if (legal === undefined) {
    const snapshot = jobLegality.resolveState({ value, context: { jobType: state.spec?.Type } });
    legal = snapshot.can({ type: command });
    table.set(key, legal);
  }
  return legal;
}
