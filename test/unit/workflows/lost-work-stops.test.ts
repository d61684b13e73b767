import pino from "pino";
import { describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../../src/actors/deadline-scheduler.ts";
import { LostWorkStops, STOP_RESENDS } from "../../../src/workflows/jobs/lost-work-stops.ts";
import { RESEND_MS } from "../../../src/workflows/jobs/work-resends.ts";
import { ManualClock } from "../../support/manual-clock.ts";
import { RecordingWorkClient } from "../../support/recording-work-client.ts";

/**
 * A node that came back is told to stop what was lost with it, now and STOP_RESENDS more times:
 * each telling a deadline in a real DeadlineScheduler on a manual clock, the transport boundary
 * recorded (messages made and validated as NodeWorkClient makes them).
 */
const A = "e-00000000-0000-4000-8000-00000000000a";
const B = "e-00000000-0000-4000-8000-00000000000b";
const C = "e-00000000-0000-4000-8000-00000000000c";

function setup() {
  const clock = new ManualClock(Date.parse("2026-11-28T12:00:00Z"));
  const deadlines = new DeadlineScheduler(clock);
  const work = new RecordingWorkClient(clock);
  const logs: { level: number; msg: string }[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const stops = new LostWorkStops({ work, deadlines, clock, logger });
  const t0 = clock.now();
  /** Each CancelExecution sent: when (ms after t0), to which node, for which execution. */
  const told = () => work.sent.map((s) => [s.at - t0, s.nodeId, s.message.ExecutionID]);
  return { clock, deadlines, work, logs, stops, told };
}

describe("LostWorkStops", () => {
  it("tells the node now and STOP_RESENDS more times, RESEND_MS of the clock apart, then stops", async () => {
    const { clock, deadlines, work, logs, stops, told } = setup();
    stops.tell("node-a", [A, B]);
    expect(told()).toEqual([
      [0, "node-a", A],
      [0, "node-a", B],
    ]);
    expect(work.sent[0]?.message).toMatchObject({
      Type: "CancelExecution",
      NodeID: "node-a",
      Reason: "the orchestrator gave this execution up while node node-a was away",
    });
    expect(logs.map((l) => l.msg)).toEqual(["a node that came back is told to stop the executions lost with it"]);
    // Real time alone tells it nothing more.
    await new Promise((r) => setTimeout(r, RESEND_MS + 300));
    expect(work.sent).toHaveLength(2);
    await clock.advance(RESEND_MS * 10);
    expect(STOP_RESENDS).toBe(2);
    expect(told()).toEqual([
      [0, "node-a", A],
      [0, "node-a", B],
      [2_000, "node-a", A],
      [2_000, "node-a", B],
      [4_000, "node-a", A],
      [4_000, "node-a", B],
    ]);
    expect(deadlines.size).toBe(0);
  });

  it("tells nothing for a return with nothing lost", async () => {
    const { clock, deadlines, logs, stops, told } = setup();
    stops.tell("node-a", []);
    await clock.advance(10_000);
    expect(told()).toEqual([]);
    expect(logs).toEqual([]);
    expect(deadlines.size).toBe(0);
  });

  it("counts each return on its own: a node back again soon after is told of what it lost since, as often", async () => {
    const { clock, stops, told } = setup();
    stops.tell("node-a", [A]);
    await clock.advance(1_000);
    stops.tell("node-a", [B]);
    stops.tell("node-b", [C]);
    await clock.advance(10_000);
    // Deadlines due at one instant fire in no set order.
    expect(told().sort((x, y) => String(x).localeCompare(String(y)))).toEqual([
      [0, "node-a", A],
      [1_000, "node-a", B],
      [1_000, "node-b", C],
      [2_000, "node-a", A],
      [3_000, "node-a", B],
      [3_000, "node-b", C],
      [4_000, "node-a", A],
      [5_000, "node-a", B],
      [5_000, "node-b", C],
    ]);
  });

  it("a telling again that fails to publish is logged and leaves the heap's other deadlines to fire", async () => {
    const { clock, deadlines, work, logs, stops, told } = setup();
    const fired: number[] = [];
    stops.tell("node-a", [A]);
    deadlines.set("other", clock.now() + RESEND_MS, () => fired.push(clock.now()));
    work.failNext = 1;
    await clock.advance(10_000);
    expect(told()).toEqual([
      [0, "node-a", A],
      [4_000, "node-a", A],
    ]);
    expect(fired).toHaveLength(1);
    expect(logs.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([
      "telling a node again to stop the executions lost with it failed",
    ]);
  });

  it("tells nothing more once the orchestrator stops", async () => {
    const { clock, deadlines, stops, told } = setup();
    stops.tell("node-a", [A]);
    await clock.advance(2_000);
    stops.stop();
    await clock.advance(10_000);
    expect(told()).toEqual([
      [0, "node-a", A],
      [2_000, "node-a", A],
    ]);
    expect(deadlines.size).toBe(0);
  });
});
