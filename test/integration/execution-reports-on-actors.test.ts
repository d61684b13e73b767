import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { executionIdOf, jobIdOf } from "../../machines/job/job-id.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { ExecutionReportsOnActors } from "../../src/actors/execution-reports-on-actors.ts";
import { JobControl } from "../../src/actors/job-control.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { storedEvents } from "../support/stored-events.ts";
import { helloOutput } from "../support/run-output.ts";

/** Node reports as execution commands, over a real SQLite file: a node speaks only for its own executions. */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const dir = tempDir();
  const clock = new ManualClock(Date.parse("2026-11-22T12:00:00Z"));
  const store = new SqliteEventStore(join(dir, "shoal.db"));
  const deadlines = new DeadlineScheduler(clock);
  const control = new JobControl({ store, clock, logger: silentLogger, deadlines, defaults: BACALHAU_JOB_DEFAULTS });
  cleanups.push(
    () => store.close(),
    () => deadlines.stop(),
    () => control.close(),
  );
  const executionId = executionIdOf(randomUUID());
  await control.executions.execute(
    executionId,
    {
      type: "Create",
      jobId: jobIdOf(randomUUID()),
      namespace: "default",
      nodeId: "node-a",
      jobType: "batch",
      jobVersion: 1,
      partitionIndex: 0,
      resources: { CPU: 0.5, Memory: 1000, Disk: 0, GPU: 0 },
      executionTimeout: 0,
      timeoutBuffer: 0,
    },
    commandContext({ type: "system", id: "test" }),
  );
  return { dir, control, executionId, reports: new ExecutionReportsOnActors(control.executions) };
}

const output = helloOutput;

describe("ExecutionReportsOnActors", () => {
  it("refuses a report about another node's execution (Forbidden) or an unknown one (NotFound), storing nothing", async () => {
    const { dir, executionId, reports } = await setup();
    const before = (await storedEvents(dir)).length;
    await expect(
      reports.started({ Type: "ExecutionStarted", MessageID: "m1", NodeID: "node-b", ExecutionID: executionId }),
    ).rejects.toMatchObject({ kind: "Forbidden" });
    await expect(
      reports.completed({
        Type: "ExecutionCompleted",
        MessageID: "m2",
        NodeID: "node-b",
        ExecutionID: executionId,
        RunOutput: output,
      }),
    ).rejects.toMatchObject({ kind: "Forbidden" });
    await expect(
      reports.bidAccepted({
        Type: "BidAccepted",
        MessageID: "m3",
        NodeID: "node-a",
        ExecutionID: executionIdOf(randomUUID()),
      }),
    ).rejects.toMatchObject({ kind: "NotFound" });
    expect((await storedEvents(dir)).length).toBe(before);
  });

  it("an accepted bid is recorded and waits for approval (the workflow's); a repeat changes nothing", async () => {
    const { dir, control, executionId, reports } = await setup();
    await reports.bidAccepted({ Type: "BidAccepted", MessageID: "m1", NodeID: "node-a", ExecutionID: executionId });
    await reports.bidAccepted({ Type: "BidAccepted", MessageID: "m2", NodeID: "node-a", ExecutionID: executionId });
    expect((await control.executions.get(executionId)).state).toMatchObject({
      computeState: "AskForBidAccepted",
      desiredState: "Pending",
    });
    const events = (await storedEvents(dir)).filter((e) => e.stream === `execution-${executionId}`);
    expect(events.map((e) => e.type)).toEqual(["ExecutionCreated", "ExecutionBidAccepted"]);
    expect(events[1]!.metadata).toMatchObject({ actor: { type: "node", id: "node-a" }, causationId: "m1" });
  });

  it("once approved, the node's answers to its RunExecution: start and completion follow; the output is stored in Bacalhau's shape, with the node as actor", async () => {
    const { dir, control, executionId, reports } = await setup();
    await reports.bidAccepted({ Type: "BidAccepted", MessageID: "m1", NodeID: "node-a", ExecutionID: executionId });
    await control.executions.execute(
      executionId,
      { type: "Approve" },
      commandContext({ type: "workflow", id: "jobs" }),
    );
    // The node answers the run with its bid again: acknowledged, nothing stored.
    await reports.bidAccepted({ Type: "BidAccepted", MessageID: "m1b", NodeID: "node-a", ExecutionID: executionId });
    await reports.started({ Type: "ExecutionStarted", MessageID: "m2", NodeID: "node-a", ExecutionID: executionId });
    await reports.completed({
      Type: "ExecutionCompleted",
      MessageID: "m3",
      NodeID: "node-a",
      ExecutionID: executionId,
      RunOutput: output,
    });
    // A repeat (the node heard no answer) stores nothing more.
    await reports.completed({
      Type: "ExecutionCompleted",
      MessageID: "m3",
      NodeID: "node-a",
      ExecutionID: executionId,
      RunOutput: output,
    });
    const state = (await control.executions.get(executionId)).state;
    expect(state.computeState).toBe("Completed");
    expect(state.runOutput).toMatchObject({ Stdout: "hello\n", ExitCode: 0 });
    const events = (await storedEvents(dir)).filter((e) => e.stream === `execution-${executionId}`);
    expect(events.map((e) => e.type)).toEqual([
      "ExecutionCreated",
      "ExecutionBidAccepted",
      "ExecutionApproved",
      "ExecutionStarted",
      "ExecutionCompleted",
    ]);
    expect(events[3]!.metadata).toMatchObject({ actor: { type: "node", id: "node-a" }, causationId: "m2" });
  });

  it("a declined bid: AskForBidRejected with the node's reason; a run refused after approval: Failed; late answers on an ended execution change nothing", async () => {
    const { control, executionId, reports } = await setup();
    await reports.bidRejected({
      Type: "BidRejected",
      MessageID: "m1",
      NodeID: "node-a",
      ExecutionID: executionId,
      Reason: "node node-a cannot fit execution now",
      Code: "Unavailable",
    });
    expect((await control.executions.get(executionId)).state).toMatchObject({
      computeState: "AskForBidRejected",
      computeMessage: "node node-a cannot fit execution now",
      desiredState: "Stopped",
      desiredMessage: "bid rejected",
    });
    await reports.bidAccepted({ Type: "BidAccepted", MessageID: "m2", NodeID: "node-a", ExecutionID: executionId });
    await reports.bidRejected({
      Type: "BidRejected",
      MessageID: "m3",
      NodeID: "node-a",
      ExecutionID: executionId,
      Reason: "again",
      Code: "Unavailable",
    });
    expect((await control.executions.get(executionId)).state).toMatchObject({
      computeState: "AskForBidRejected",
      computeMessage: "node node-a cannot fit execution now",
    });

    const second = await setup();
    await second.reports.bidAccepted({
      Type: "BidAccepted",
      MessageID: "m1",
      NodeID: "node-a",
      ExecutionID: second.executionId,
    });
    await second.control.executions.execute(
      second.executionId,
      { type: "Approve" },
      commandContext({ type: "workflow", id: "jobs" }),
    );
    // A refused ask answered late (it was sent twice) is not the run's answer: nothing changes.
    await second.reports.bidRejected({
      Type: "BidRejected",
      MessageID: "m2",
      NodeID: "node-a",
      ExecutionID: second.executionId,
      Reason: "busy at the second ask",
      Code: "Unavailable",
      Answers: "AskForBid",
    });
    expect((await second.control.executions.get(second.executionId)).state).toMatchObject({
      computeState: "BidAccepted",
      desiredState: "Running",
    });
    await second.reports.bidRejected({
      Type: "BidRejected",
      MessageID: "m3",
      NodeID: "node-a",
      ExecutionID: second.executionId,
      Reason: "node node-a cannot fit execution now",
      Code: "Unavailable",
      Answers: "RunExecution",
    });
    expect((await second.control.executions.get(second.executionId)).state).toMatchObject({
      computeState: "Failed",
      computeMessage: "node node-a cannot fit execution now",
      desiredState: "Stopped",
    });
    // A node that does not say what it answers: a refusal after approval ends the execution too.
    const third = await setup();
    await third.reports.bidAccepted({
      Type: "BidAccepted",
      MessageID: "m1",
      NodeID: "node-a",
      ExecutionID: third.executionId,
    });
    await third.control.executions.execute(
      third.executionId,
      { type: "Approve" },
      commandContext({ type: "workflow", id: "jobs" }),
    );
    await third.reports.bidRejected({
      Type: "BidRejected",
      MessageID: "m2",
      NodeID: "node-a",
      ExecutionID: third.executionId,
      Reason: "no room",
      Code: "Unavailable",
    });
    expect((await third.control.executions.get(third.executionId)).state).toMatchObject({
      computeState: "Failed",
      computeMessage: "no room",
    });
  });

  it("a cancelled execution's failure report is acknowledged and changes nothing", async () => {
    const { control, executionId, reports } = await setup();
    await control.executions.execute(
      executionId,
      { type: "Cancel", reason: "stopped" },
      commandContext({ type: "system", id: "test" }),
    );
    await reports.failed({
      Type: "ExecutionFailed",
      MessageID: "m1",
      NodeID: "node-a",
      ExecutionID: executionId,
      Reason: "cancelled",
      Cause: "cancelled",
    });
    expect((await control.executions.get(executionId)).state.computeState).toBe("Cancelled");
  });

  it("a cancelled execution's end report with its output keeps that output once, in the node's name", async () => {
    const { control, dir, executionId, reports } = await setup();
    await control.executions.execute(
      executionId,
      { type: "Cancel", reason: "stopped" },
      commandContext({ type: "system", id: "test" }),
    );
    const end = {
      Type: "ExecutionFailed",
      NodeID: "node-a",
      ExecutionID: executionId,
      Reason: "cancelled",
      Cause: "cancelled",
      RunOutput: { ...output, ExitCode: 143 },
    } as const;
    await reports.failed({ ...end, MessageID: "m1" });
    // The node sends its report again until answered; a later completion report finds the output kept.
    await reports.failed({ ...end, MessageID: "m1", RunOutput: { ...output, STDOUT: "other\n" } });
    await reports.completed({
      Type: "ExecutionCompleted",
      MessageID: "m2",
      NodeID: "node-a",
      ExecutionID: executionId,
      RunOutput: output,
    });

    expect((await control.executions.get(executionId)).state).toMatchObject({
      computeState: "Cancelled",
      runOutput: { Stdout: "hello\n", stderr: "", ExitCode: 143 },
    });
    const kept = (await storedEvents(dir)).filter((e) => e.type === "ExecutionOutputKept");
    expect(kept).toHaveLength(1);
    expect(kept[0]!.metadata).toMatchObject({ actor: { type: "node", id: "node-a" }, causationId: "m1" });
  });
});
