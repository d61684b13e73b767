import { describe, expect, it } from "vitest";
import { jobChart, jobChartIndex, jobTransitions } from "../../../../machines/job/job-chart.ts";
import type { JobCommand } from "../../../../machines/job/job-commands.ts";
import { jobDecider } from "../../../../machines/job/job-decider.ts";
import { BACALHAU_JOB_DEFAULTS } from "../../../../machines/job/job-defaults.ts";
import type { JobState } from "../../../../machines/job/job-state.ts";
import { validateJobSubmission } from "../../../../src/actors/job-submission/validate-job-submission.ts";
import { JOB_EVENT_TYPES, type JobEvent } from "../../../../src/events/catalog/job-events.ts";
import {
  expectDecideEmitsOnlyWhatTheChartTakes,
  expectEvolveFollowsTheChart,
  statesReached,
  type ChartedEntity,
} from "../../../support/chart-agreement.ts";
import { SPEC_NOW } from "../../../support/decider-spec.ts";

const ID = "j-00000000-0000-4000-8000-000000000001";
const defaults = BACALHAU_JOB_DEFAULTS;
const raw = (extra: Record<string, unknown> = {}, timeouts: Record<string, number> = {}) => ({
  Type: "batch",
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } }, Timeouts: timeouts }],
  ...extra,
});
function specOf(input: unknown) {
  const r = validateJobSubmission(input, { jobId: ID, defaults });
  if (!r.ok) throw new Error("fixture is invalid");
  return r.spec;
}
const submitted = (input: unknown): JobEvent => ({
  type: "JobSubmitted",
  data: { JobID: ID, Job: specOf(input), Version: 1, Warnings: [] },
});

const events: JobEvent[] = [
  submitted(raw({}, { QueueTimeout: 600, TotalTimeout: 3600 })),
  submitted(raw({ Type: "service" }, { QueueTimeout: 600 })),
  { type: "JobQueued", data: { JobID: ID, Previous: "Pending", Reason: "no nodes" } },
  { type: "JobStarted", data: { JobID: ID, Previous: "Pending" } },
  { type: "JobCompleted", data: { JobID: ID, Previous: "Running" } },
  { type: "JobFailed", data: { JobID: ID, Previous: "Running", Cause: "Scheduling", Message: "failed" } },
  { type: "JobStopped", data: { JobID: ID, Previous: "Running", Reason: "enough" } },
  {
    type: "JobUpdated",
    data: {
      JobID: ID,
      Previous: "Completed",
      Version: 2,
      Job: specOf(raw({ Count: 2 })),
      Diff: "",
      Forced: true,
      Warnings: [],
    },
  },
  {
    type: "JobRerun",
    data: { JobID: ID, Previous: "Failed", Version: 2, FromVersion: 1, Job: specOf(raw()), Reason: "job rerun" },
  },
  { type: "JobUpdateHeld", data: { JobID: ID, Previous: "Running", Version: 2, Reason: "no room" } },
  { type: "JobUpdateResumed", data: { JobID: ID, Previous: "Running", Version: 2 } },
];

const job: ChartedEntity<JobState, JobCommand, JobEvent> = {
  chart: jobChart,
  decider: jobDecider,
  id: ID,
  valueOf: (state) => jobTransitions.values[jobChartIndex(state)]!,
  events,
};

const commands: JobCommand[] = [
  {
    type: "Submit",
    submission: validateJobSubmission(raw({}, { QueueTimeout: 60, TotalTimeout: 600 }), { jobId: ID, defaults }),
  },
  { type: "Submit", submission: validateJobSubmission(raw({ Type: "daemon" }), { jobId: ID, defaults }) },
  { type: "Queue", reason: "r" },
  { type: "Queue", reason: "r2", wanted: 2 },
  { type: "Queue", reason: "r1", wanted: 1 },
  { type: "Run" },
  { type: "Complete" },
  { type: "Fail", reason: "f" },
  { type: "Stop", reason: "s" },
  { type: "TimeOutQueue" },
  { type: "TimeOutJob" },
  { type: "Put", submission: validateJobSubmission(raw({ Count: 3 }), { jobId: ID, defaults }), force: false },
  { type: "Put", submission: validateJobSubmission(raw(), { jobId: ID, defaults }), force: true },
  { type: "Rerun", version: 0, reason: "" },
  { type: "Rerun", version: 1, reason: "again" },
  { type: "HoldUpdate", reason: "no room" },
  { type: "ResumeUpdate" },
];

const states = statesReached(job, 3);

describe("the job chart", () => {
  it("has Bacalhau's job states and an absent one, every one reached", () => {
    expect(jobTransitions.values).toEqual(["absent", "pending", "queued", "running", "completed", "failed", "stopped"]);
    expect(new Set(states.map(jobChartIndex))).toEqual(new Set(jobTransitions.values.map((_, i) => i)));
  });

  it("names only the stored event types, and every one of them", () => {
    expect([...jobChart.root.events].sort()).toEqual([...JOB_EVENT_TYPES].sort());
  });

  it("and evolve agree: where the chart takes an event, evolve goes there; where it refuses one, nothing changes", () => {
    const { taken, refused } = expectEvolveFollowsTheChart(job, states);
    expect(new Set([...taken, ...refused]).size).toBe(jobTransitions.values.length * JOB_EVENT_TYPES.length);
    expect(taken.has("running × JobQueued")).toBe(true);
    expect(refused.has("stopped × JobStarted")).toBe(true);
    // An ended job moves only to its next version.
    expect(taken.has("completed × JobUpdated")).toBe(true);
    expect(taken.has("stopped × JobRerun")).toBe(true);
  });

  it("is asked by decide: no command emits an event the chart refuses, before or past the job's deadlines", () => {
    const checked =
      expectDecideEmitsOnlyWhatTheChartTakes(job, states, commands, SPEC_NOW) +
      expectDecideEmitsOnlyWhatTheChartTakes(job, states, commands, SPEC_NOW + 3_600_000);
    expect(checked).toBeGreaterThan(50);
  });
});
