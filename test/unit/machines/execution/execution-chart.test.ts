import { describe, expect, it } from "vitest";
import {
  executionChart,
  executionChartIndex,
  executionTransitions,
} from "../../../../machines/execution/execution-chart.ts";
import type { ExecutionCommand } from "../../../../machines/execution/execution-commands.ts";
import { executionDecider } from "../../../../machines/execution/execution-decider.ts";
import type { ExecutionState } from "../../../../machines/execution/execution-state.ts";
import { COMPUTE_STATES } from "../../../../machines/execution/execution-states.ts";
import type { JobType } from "../../../../machines/job/job-spec.ts";
import {
  EXECUTION_EVENT_TYPES,
  type ExecutionEvent,
  type RunOutput,
} from "../../../../src/events/catalog/execution-events.ts";
import {
  expectDecideEmitsOnlyWhatTheChartTakes,
  expectEvolveFollowsTheChart,
  statesReached,
  type ChartedEntity,
} from "../../../support/chart-agreement.ts";
import { SPEC_NOW } from "../../../support/decider-spec.ts";

const ID = "e-00000000-0000-4000-8000-000000000002";
const JOB = "j-00000000-0000-4000-8000-000000000001";
const resources = { CPU: 0.5, Memory: 512_000_000, Disk: 0, GPU: 0 };
const output: RunOutput = {
  Stdout: "",
  StdoutTruncated: false,
  stderr: "",
  StderrTruncated: false,
  ExitCode: 0,
  ErrorMsg: "",
};
const created = (jobType: JobType): ExecutionEvent => ({
  type: "ExecutionCreated",
  data: {
    ExecutionID: ID,
    JobID: JOB,
    Namespace: "default",
    NodeID: "node-1",
    JobType: jobType,
    JobVersion: 1,
    PartitionIndex: 0,
    DesiredState: jobType === "ops" || jobType === "daemon" ? "Running" : "Pending",
    AllocatedResources: resources,
    ExecutionTimeout: 60,
    TimeoutBuffer: 1,
    PreviousExecution: "",
    AnswerTimeoutMs: 30_000,
  },
});

const events: ExecutionEvent[] = [
  created("batch"),
  created("ops"),
  created("service"),
  { type: "ExecutionBidAsked", data: { ExecutionID: ID, NodeID: "node-1" } },
  { type: "ExecutionBidAccepted", data: { ExecutionID: ID, NodeID: "node-1" } },
  { type: "ExecutionBidDeclined", data: { ExecutionID: ID, NodeID: "node-1", Reason: "busy" } },
  { type: "ExecutionApproved", data: { ExecutionID: ID } },
  { type: "ExecutionRejected", data: { ExecutionID: ID, Reason: "not needed" } },
  { type: "ExecutionStarted", data: { ExecutionID: ID } },
  { type: "ExecutionCompleted", data: { ExecutionID: ID, RunOutput: output } },
  { type: "ExecutionFailed", data: { ExecutionID: ID, Previous: "Running", Cause: "Node", Message: "boom" } },
  { type: "ExecutionCancelled", data: { ExecutionID: ID, Previous: "Running", Reason: "stop" } },
  { type: "ExecutionOutputKept", data: { ExecutionID: ID, RunOutput: output } },
];

const execution: ChartedEntity<ExecutionState, ExecutionCommand, ExecutionEvent> = {
  chart: executionChart,
  decider: executionDecider,
  id: ID,
  valueOf: (state) => executionTransitions.values[executionChartIndex(state)]!,
  events,
};

const create = (jobType: JobType): ExecutionCommand => ({
  type: "Create",
  jobId: JOB,
  namespace: "default",
  nodeId: "node-1",
  jobType,
  jobVersion: 1,
  partitionIndex: 0,
  resources,
  executionTimeout: 60,
  timeoutBuffer: 1,
  answerTimeoutMs: 30_000,
});
const commands: ExecutionCommand[] = [
  create("batch"),
  create("daemon"),
  { type: "AskForBid" },
  { type: "AcceptBid" },
  { type: "DeclineBid", reason: "busy" },
  { type: "Approve" },
  { type: "Reject", reason: "not needed" },
  { type: "Start" },
  { type: "Complete", output },
  { type: "Fail", reason: "boom", cause: "Node" },
  { type: "Cancel", reason: "stop" },
  { type: "KeepOutput", output },
  { type: "TimeOutExecution" },
  { type: "TimeOutAnswer" },
];

// Publishing is Bacalhau's and no event leads to it: a running execution put there by hand stands for it.
const reached = statesReached(execution, 5);
const publishing = { ...reached.find((s) => s.computeState === "Running")!, computeState: "Publishing" as const };
const states = [...reached, publishing];

describe("the execution chart", () => {
  it("has Bacalhau's compute states and an absent one, every one reached (Publishing by hand)", () => {
    expect([...executionTransitions.values].sort()).toEqual(
      ["absent", ...COMPUTE_STATES.filter((s) => s !== "Undefined")].sort(),
    );
    expect(new Set(states.map(executionChartIndex))).toEqual(new Set(executionTransitions.values.map((_, i) => i)));
  });

  it("names only the stored event types, and every one of them", () => {
    expect([...executionChart.root.events].sort()).toEqual([...EXECUTION_EVENT_TYPES].sort());
  });

  it("and evolve agree: where the chart takes an event, evolve goes there; where it refuses one, nothing changes", () => {
    const { taken, refused } = expectEvolveFollowsTheChart(execution, states);
    expect(new Set([...taken, ...refused]).size).toBe(
      executionTransitions.values.length * EXECUTION_EVENT_TYPES.length,
    );
    // A direct execution's accepted bid has it executing; an asked one's waits for approval.
    expect(taken.has("New × ExecutionBidAccepted")).toBe(true);
    expect(refused.has("Running × ExecutionStarted")).toBe(true);
  });

  it("takes a direct execution's accepted bid to BidAccepted, an asked one's to AskForBidAccepted", () => {
    const accepted = events.find((e) => e.type === "ExecutionBidAccepted")!;
    const fresh = executionDecider.initialState(ID);
    const direct = executionDecider.evolve(fresh, created("ops"), "2026-01-01T00:00:00.000Z");
    const asked = executionDecider.evolve(fresh, created("batch"), "2026-01-01T00:00:00.000Z");
    expect(executionDecider.evolve(direct, accepted, "2026-01-01T00:00:01.000Z").computeState).toBe("BidAccepted");
    expect(executionDecider.evolve(asked, accepted, "2026-01-01T00:00:01.000Z").computeState).toBe("AskForBidAccepted");
  });

  it("is asked by decide: no command emits an event the chart refuses, before or past the execution's deadlines", () => {
    const checked =
      expectDecideEmitsOnlyWhatTheChartTakes(execution, states, commands, SPEC_NOW) +
      expectDecideEmitsOnlyWhatTheChartTakes(execution, states, commands, SPEC_NOW + 3_600_000);
    expect(checked).toBeGreaterThan(100);
  });
});
