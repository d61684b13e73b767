import { describe, expect, it } from "vitest";
import { executionHistoryEvent, jobHistoryEvent } from "../../../../machines/job/history-event.ts";
import type { ExecutionEvent } from "../../../../src/events/catalog/execution-events.ts";
import type { JobEvent } from "../../../../src/events/catalog/job-events.ts";
import { exampleEvent } from "../../../support/example-events.ts";

const J = "j-00000000-0000-4000-8000-000000000001";
const E = "e-00000000-0000-4000-8000-000000000002";
const SPEC = (exampleEvent("JobSubmitted", J) as Extract<JobEvent, { type: "JobSubmitted" }>).data.Job;

describe("history entries as Bacalhau's job history shows them", () => {
  it("gives each job event Bacalhau's topic and message", () => {
    const cases: [JobEvent, string, string, Record<string, string>][] = [
      [
        {
          type: "JobQueued",
          data: {
            JobID: J,
            Previous: "Pending",
            Reason: "not enough nodes to run job. requested: 1, available: 0, suitable: 0.",
          },
        },
        "Queueing",
        "Job queued. not enough nodes to run job. requested: 1, available: 0, suitable: 0.",
        {},
      ],
      [
        { type: "JobUpdateHeld", data: { JobID: J, Previous: "Running", Version: 2, Reason: "no node" } },
        "Scheduling",
        "Version 2 waits for room: the earlier version's executions run on until it can be placed. no node",
        {},
      ],
      [
        { type: "JobUpdateResumed", data: { JobID: J, Previous: "Running", Version: 2 } },
        "Scheduling",
        "Version 2 found room: its placement goes on",
        {},
      ],
      [
        { type: "JobStarted", data: { JobID: J, Previous: "Queued" } },
        "State Update",
        "Running",
        { NewState: "Running" },
      ],
      [
        { type: "JobCompleted", data: { JobID: J, Previous: "Running" } },
        "State Update",
        "Completed",
        { NewState: "Completed" },
      ],
      [
        {
          type: "JobFailed",
          data: {
            JobID: J,
            Previous: "Running",
            Cause: "TotalTimeout",
            Message: "Job timed out. Job took longer than 30m0s",
          },
        },
        "Job Timeout",
        "Job timed out. Job took longer than 30m0s",
        { IsError: "true", Hint: "Increase the task timeout or allocate more resources", FailsExecution: "true" },
      ],
      [
        {
          type: "JobFailed",
          data: { JobID: J, Previous: "Queued", Cause: "QueueTimeout", Message: "not enough nodes" },
        },
        "Scheduling",
        "not enough nodes",
        { IsError: "true" },
      ],
      [
        { type: "JobStopped", data: { JobID: J, Previous: "Running", Reason: "enough" } },
        "Scheduling",
        "Job requested to stop before completion",
        { Reason: "enough" },
      ],
      [
        {
          type: "JobUpdated",
          data: {
            JobID: J,
            Previous: "Completed",
            Version: 2,
            Job: SPEC,
            Diff: "- Count: 1\n+ Count: 2",
            Forced: false,
            Warnings: [],
          },
        },
        "Submission",
        "Job updated",
        {},
      ],
      [
        {
          type: "JobRerun",
          data: { JobID: J, Previous: "Failed", Version: 3, FromVersion: 1, Job: SPEC, Reason: "job rerun" },
        },
        "Submission",
        "Job rerun requested",
        { Reason: "job rerun" },
      ],
    ];
    for (const [event, Topic, Message, Details] of cases)
      expect(jobHistoryEvent(event), event.type).toEqual({ Topic, Message, Details });
  });

  it("gives execution events theirs, and none for asking for a bid (the node's answer has one)", () => {
    expect(
      executionHistoryEvent({ type: "ExecutionBidAsked", data: { ExecutionID: E, NodeID: "n1" } }),
    ).toBeUndefined();
    expect(executionHistoryEvent({ type: "ExecutionBidAccepted", data: { ExecutionID: E, NodeID: "n1" } })).toEqual({
      Topic: "Exec Scanning",
      Message: "Accepted job",
      Details: {},
    });
    const cases: [ExecutionEvent, string, string][] = [
      [{ type: "ExecutionApproved", data: { ExecutionID: E } }, "Execution", "Running"],
      [
        {
          type: "ExecutionCompleted",
          data: {
            ExecutionID: E,
            RunOutput: {
              Stdout: "",
              StdoutTruncated: false,
              stderr: "",
              StderrTruncated: false,
              ExitCode: 0,
              ErrorMsg: "",
            },
          },
        },
        "Execution",
        "Completed successfully",
      ],
      [
        {
          type: "ExecutionFailed",
          data: {
            ExecutionID: E,
            Previous: "Running",
            Cause: "ExecutionTimeout",
            Message: "Execution timed out. Execution took longer than 10s",
          },
        },
        "Exec Timeout",
        "Execution timed out. Execution took longer than 10s",
      ],
      [
        {
          type: "ExecutionCancelled",
          data: {
            ExecutionID: E,
            Previous: "Running",
            Reason: "Execution stop requested because job has been stopped",
          },
        },
        "Scheduling",
        "Execution stop requested because job has been stopped",
      ],
      [
        { type: "ExecutionBidDeclined", data: { ExecutionID: E, NodeID: "n1", Reason: "not enough memory" } },
        "Exec Scanning",
        "not enough memory",
      ],
    ];
    for (const [event, Topic, Message] of cases)
      expect(executionHistoryEvent(event), event.type).toMatchObject({ Topic, Message });
  });

  it("says what a retry replaces and why; a first execution keeps Bacalhau's entry", () => {
    const created = (PreviousExecution: string): ExecutionEvent => ({
      type: "ExecutionCreated",
      data: {
        ExecutionID: E,
        JobID: J,
        Namespace: "default",
        NodeID: "n2",
        JobType: "batch",
        JobVersion: 1,
        PartitionIndex: 0,
        DesiredState: "Pending",
        AllocatedResources: { CPU: 0.5, Memory: 1, Disk: 0, GPU: 0 },
        ExecutionTimeout: 0,
        TimeoutBuffer: 60,
        PreviousExecution,
      },
    });
    expect(executionHistoryEvent(created(""), "the job was submitted")).toEqual({
      Topic: "Scheduling",
      Message: "Requested execution on n2",
      Details: { NodeID: "n2" },
    });
    const why = "retry of partition 0: execution e-1 on node n1 failed: the command exited with code 3 (exit code 3)";
    expect(executionHistoryEvent(created("e-1"), why)).toEqual({
      Topic: "Scheduling",
      Message: `Requested execution on n2 (${why})`,
      Details: { NodeID: "n2", PreviousExecution: "e-1" },
    });
    expect(executionHistoryEvent(created("e-1"))?.Message).toBe("Requested execution on n2 (replacing e-1)");
  });
});
