import pino from "pino";
import { describe, expect, it } from "vitest";
import { unansweredMessage } from "../../../machines/execution/execution-deadlines.ts";
import { initialExecutionState } from "../../../machines/execution/execution-state.ts";
import type { ComputeStateName } from "../../../machines/execution/execution-states.ts";
import { DeadlineScheduler } from "../../../src/actors/deadline-scheduler.ts";
import { nodeLostMessage } from "../../../src/scheduler/job-outcome.ts";
import { ResendingWorkClient } from "../../../src/workflows/jobs/resending-work-client.ts";
import { RESEND_MS, WorkResends } from "../../../src/workflows/jobs/work-resends.ts";
import { ManualClock } from "../../support/manual-clock.ts";
import { RecordingWorkClient } from "../../support/recording-work-client.ts";

/**
 * CancelExecution is sent like RunExecution: again every RESEND_MS of the orchestrator's clock until the node reports
 * the execution ended or the answer bound passes. A real DeadlineScheduler on a manual clock; the wire recorded.
 */
const A = "e-00000000-0000-4000-8000-00000000000a";
const B = "e-00000000-0000-4000-8000-00000000000b";
const [C, D, E, F, G] = ["c", "d", "e", "f", "0"].map((x) => `e-00000000-0000-4000-8000-00000000000${x}`) as [
  string,
  string,
  string,
  string,
  string,
];
const BOUND_MS = 10_000;

function setup() {
  const clock = new ManualClock(Date.parse("2026-11-30T12:00:00Z"));
  const deadlines = new DeadlineScheduler(clock);
  const wire = new RecordingWorkClient(clock);
  const logs: { level: number; msg: string }[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => logs.push(JSON.parse(line)) });
  let down = false;
  const resends = new WorkResends({ deadlines, clock, logger, transportDown: () => down });
  const work = new ResendingWorkClient({ wire, resends, clock, logger, answerTimeoutMs: BOUND_MS });
  const t0 = clock.now();
  /** When (ms after t0) each CancelExecution of `executionId` was published. */
  const cancelsOf = (executionId: string) => wire.of("CancelExecution", executionId).map((s) => s.at - t0);
  return { clock, deadlines, wire, logs, resends, work, cancelsOf, setDown: (d: boolean) => (down = d) };
}

describe("ResendingWorkClient", () => {
  it("sends a cancel again every RESEND_MS until its node reports the execution ended", async () => {
    const { clock, deadlines, wire, work, cancelsOf } = setup();
    work.cancelExecution("node-a", A, "stopped for job update");
    work.cancelExecution("node-a", B, "stopped for job update");
    await clock.advance(RESEND_MS * 2);
    work.ended(A);
    await clock.advance(RESEND_MS);
    work.ended(B);
    await clock.advance(RESEND_MS * 3);
    expect(RESEND_MS).toBe(2_000);
    expect(cancelsOf(A)).toEqual([0, 2_000, 4_000]);
    expect(cancelsOf(B)).toEqual([0, 2_000, 4_000, 6_000]);
    expect(wire.sent.every((s) => s.nodeId === "node-a" && s.message.Type === "CancelExecution")).toBe(true);
    expect(wire.of("CancelExecution", A)[1]?.message).toMatchObject({ Reason: "stopped for job update" });
    expect(deadlines.size).toBe(0);
  });

  it("gives up once the answer bound passes, and says so", async () => {
    const { clock, deadlines, logs, work, cancelsOf } = setup();
    work.cancelExecution("node-a", A, "stopped");
    await clock.advance(BOUND_MS * 3);
    expect(cancelsOf(A)).toEqual([0, 2_000, 4_000, 6_000, 8_000]);
    expect(deadlines.size).toBe(0);
    expect(logs.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([
      "a node did not answer CancelExecution within the answer bound; it is no longer sent",
    ]);
  });

  it("a resend that fails to publish is logged and the chain goes on; run and ask pass through once", async () => {
    const { clock, wire, logs, work, cancelsOf } = setup();
    work.cancelExecution("node-a", A, "stopped");
    wire.failNext = 1;
    await clock.advance(RESEND_MS * 2);
    work.ended(A);
    expect(cancelsOf(A)).toEqual([0, 4_000]);
    expect(logs.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual(["sending CancelExecution again failed"]);
    const task = {
      Engine: { Type: "docker" as const, Image: "busybox" },
      Resources: { CPUMillis: 100, MemoryBytes: 1 },
      Network: "None" as const,
      ExecutionTimeout: 0,
    };
    work.runExecution({ nodeId: "node-a", executionId: B, jobId: "j-1", task });
    await clock.advance(RESEND_MS * 3);
    expect(wire.of("RunExecution", B)).toHaveLength(1);
  });

  it("after a restart, cancels what the orchestrator ended within the bound, until the node answers", async () => {
    const { clock, wire, work, cancelsOf } = setup();
    const now = clock.now();
    const ended = (id: string, computeState: ComputeStateName, computeMessage: string, agoMs: number) => ({
      ...initialExecutionState(id),
      nodeId: "node-a",
      computeState,
      computeMessage,
      desiredState: "Stopped" as const,
      modifyTime: now - agoMs,
    });
    const cancelled = ended(A, "Cancelled", "job stopped by the user", 1_000);
    const unanswered = ended(B, "Failed", unansweredMessage("node-a", "RunExecution", BOUND_MS), 5_000);
    const lost = ended(C, "Failed", nodeLostMessage("node-a", "did not heartbeat"), 0);
    const executions = [
      cancelled,
      unanswered,
      lost,
      ended(D, "Cancelled", "job stopped by the user", BOUND_MS),
      ended(E, "Failed", "exit status 1", 0),
      ended(F, "Completed", "", 0),
      { ...ended(G, "Running", "", 0), desiredState: "Running" as const },
    ];
    expect(work.resume(executions)).toBe(3);
    // A second resume (the jobs duty taken over again) starts no second chain.
    expect(work.resume(executions)).toBe(0);
    await clock.advance(RESEND_MS * 2);
    work.ended(C);
    await clock.advance(BOUND_MS * 2);
    // Each until the node answers or the bound, counted from when the orchestrator ended it, passes.
    expect(cancelsOf(A)).toEqual([0, 2_000, 4_000, 6_000, 8_000]);
    expect(cancelsOf(B)).toEqual([0, 2_000, 4_000]);
    expect(cancelsOf(C)).toEqual([0, 2_000, 4_000]);
    for (const id of [D, E, F, G]) expect(cancelsOf(id)).toEqual([]);
    expect(wire.of("CancelExecution", A)[0]?.message).toMatchObject({
      NodeID: "node-a",
      Reason: "job stopped by the user",
    });
  });

  it("sends nothing again once the orchestrator stops", async () => {
    const { clock, deadlines, resends, work, cancelsOf } = setup();
    work.cancelExecution("node-a", A, "stopped");
    resends.stop();
    work.cancelExecution("node-a", B, "stopped");
    await clock.advance(RESEND_MS * 3);
    expect(cancelsOf(A)).toEqual([0]);
    expect(cancelsOf(B)).toEqual([0]);
    expect(deadlines.size).toBe(0);
  });
});
