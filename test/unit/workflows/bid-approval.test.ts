import { describe, expect, it } from "vitest";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { DomainEvent } from "../../../src/projections/event-envelope.ts";
import { approvalsOf } from "../../../src/workflows/jobs/bid-approval.ts";
import { APPROVAL, DISPATCH, jobFlow } from "../../../src/workflows/jobs/job-flow.ts";
import { workToSend } from "../../../src/workflows/jobs/work-to-send.ts";
import type { WorkflowInput } from "../../../src/workflows/workflow-input.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { workflowInput } from "../../support/workflow-input.ts";

type E = Pick<ExecutionState, "executionId" | "partitionIndex" | "computeState" | "desiredState" | "createTime">;
const e = (
  executionId: string,
  computeState: E["computeState"],
  desiredState: E["desiredState"],
  createTime: number,
  partitionIndex = 0,
): E => ({ executionId, computeState, desiredState, createTime, partitionIndex });

describe("approval per partition (Bacalhau v1.7's getApprovalStatuses)", () => {
  const cases: [string, E[], { approve: string[]; reject: string[]; cancel: string[] }][] = [
    [
      "one accepted bid: approved",
      [e("a", "AskForBidAccepted", "Pending", 1)],
      { approve: ["a"], reject: [], cancel: [] },
    ],
    [
      "two accepted bids for one partition: the oldest approved, the other rejected",
      [e("b", "AskForBidAccepted", "Pending", 2), e("a", "AskForBidAccepted", "Pending", 1)],
      { approve: ["a"], reject: ["b"], cancel: [] },
    ],
    [
      "equal creation times go by id",
      [e("b", "AskForBidAccepted", "Pending", 1), e("a", "AskForBidAccepted", "Pending", 1)],
      { approve: ["a"], reject: ["b"], cancel: [] },
    ],
    [
      "one already meant to run: a later accepted bid is rejected",
      [e("a", "Running", "Running", 1), e("b", "AskForBidAccepted", "Pending", 2)],
      { approve: [], reject: ["b"], cancel: [] },
    ],
    [
      "two meant to run: the oldest stays, the other is cancelled (more executions than needed)",
      [e("b", "BidAccepted", "Running", 2), e("a", "Running", "Running", 1)],
      { approve: [], reject: [], cancel: ["b"] },
    ],
    [
      "a completed one: accepted bids rejected, the rest under way cancelled",
      [
        e("a", "Completed", "Stopped", 1),
        e("b", "AskForBidAccepted", "Pending", 2),
        e("c", "New", "Pending", 3),
        e("d", "Running", "Running", 4),
      ],
      { approve: [], reject: ["b"], cancel: ["c", "d"] },
    ],
    [
      "bids still awaited are left alone; ended executions count for nothing",
      [
        e("a", "New", "Pending", 1),
        e("b", "AskForBid", "Pending", 2),
        e("c", "AskForBidRejected", "Stopped", 3),
        e("d", "Failed", "Stopped", 4),
      ],
      { approve: [], reject: [], cancel: [] },
    ],
    [
      "each partition on its own",
      [
        e("a", "AskForBidAccepted", "Pending", 1, 0),
        e("b", "AskForBidAccepted", "Pending", 2, 1),
        e("c", "AskForBidAccepted", "Pending", 3, 1),
        e("d", "Running", "Running", 4, 2),
        e("f", "AskForBidAccepted", "Pending", 5, 2),
      ],
      { approve: ["a", "b"], reject: ["c", "f"], cancel: [] },
    ],
  ];
  for (const [name, executions, plan] of cases) it(name, () => expect(approvalsOf(executions)).toEqual(plan));
});

describe("the work message an execution's node is due", () => {
  it("a bid is asked while a batch or service execution is New; the run once it is approved, until it runs; an ops or daemon one runs at once", () => {
    expect(workToSend({ computeState: "New", desiredState: "Pending" })).toBe("AskForBid");
    expect(workToSend({ computeState: "AskForBidAccepted", desiredState: "Pending" })).toBeUndefined();
    expect(workToSend({ computeState: "BidAccepted", desiredState: "Running" })).toBe("RunExecution");
    expect(workToSend({ computeState: "New", desiredState: "Running" })).toBe("RunExecution");
    for (const computeState of [
      "Running",
      "Completed",
      "Failed",
      "Cancelled",
      "BidRejected",
      "AskForBidRejected",
    ] as const) {
      expect(
        workToSend({ computeState, desiredState: computeState === "Running" ? "Running" : "Stopped" }),
        computeState,
      ).toBeUndefined();
    }
  });
});

describe("the jobs workflow's bid steps", () => {
  const input = (type: DomainEvent["type"]): WorkflowInput => workflowInput("execution-e-1", exampleEvent(type, "e-1"));
  const created = (DesiredState: "Pending" | "Running", JobType: "batch" | "ops"): WorkflowInput =>
    workflowInput("execution-e-1", {
      type: "ExecutionCreated",
      data: {
        ExecutionID: "e-1",
        JobID: "j-1",
        Namespace: "default",
        NodeID: "n-1",
        JobType,
        JobVersion: 1,
        PartitionIndex: 0,
        DesiredState,
        AllocatedResources: { CPU: 0.1, Memory: 1024, Disk: 0, GPU: 0 },
        ExecutionTimeout: 60,
        TimeoutBuffer: 120,
        PreviousExecution: "",
      },
    });

  it("asks for a bid when a batch or service execution is created, runs an ops or daemon one at once, approves accepted bids, runs an approved one", () => {
    expect(jobFlow.react(created("Pending", "batch"))).toEqual([
      { handler: DISPATCH, entityId: "e-1", type: "AskForBid", reason: "the execution was placed" },
    ]);
    expect(jobFlow.react(created("Running", "ops"))).toEqual([
      { handler: DISPATCH, entityId: "e-1", type: "RunExecution", reason: "the execution was placed" },
    ]);
    expect(
      jobFlow.react(
        workflowInput("execution-e-1", { type: "ExecutionBidAccepted", data: { ExecutionID: "e-1", NodeID: "n-1" } }),
      ),
    ).toEqual([{ handler: APPROVAL, entityId: "e-1", type: "ApproveBids", reason: "a node accepted the bid" }]);
    expect(jobFlow.react(input("ExecutionApproved"))).toEqual([
      { handler: DISPATCH, entityId: "e-1", type: "RunExecution", reason: "the bid was approved" },
    ]);
    expect(jobFlow.react(input("ExecutionBidDeclined")).map((c) => c.type)).toEqual(["SettleJob", "PlaceQueuedJobs"]);
  });
});
