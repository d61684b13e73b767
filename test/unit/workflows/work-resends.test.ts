import pino from "pino";
import { describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../../src/actors/deadline-scheduler.ts";
import { Listening } from "../../../src/actors/listening.ts";
import { RESEND_MS, type ResentMessage } from "../../../src/workflows/jobs/work-resends.ts";
import { listeningResends } from "../../support/listening-resends.ts";
import { ManualClock } from "../../support/manual-clock.ts";

/**
 * The one mechanism that sends work messages again until their node answers: a chain per (execution, message), each a
 * deadline in a real DeadlineScheduler on a manual clock. What a chain sends is recorded with the clock's time.
 */
const A = "e-00000000-0000-4000-8000-00000000000a";
const B = "e-00000000-0000-4000-8000-00000000000b";

function setup() {
  const clock = new ManualClock(Date.parse("2026-11-30T12:00:00Z"));
  const deadlines = new DeadlineScheduler(clock);
  const listening = Listening.begun(clock);
  const logs: { level: number; msg: string }[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const resends = listeningResends({ deadlines, clock, logger, listening });
  const t0 = clock.now();
  const sent: { message: ResentMessage; executionId: string; at: number }[] = [];
  /** A resend that records what it sends and goes on while `goesOn()` says so. */
  const resend =
    (message: ResentMessage, executionId: string, goesOn: () => boolean = () => true) =>
    () => {
      sent.push({ message, executionId, at: clock.now() - t0 });
      return goesOn();
    };
  const times = (message: ResentMessage, executionId: string) =>
    sent.filter((s) => s.message === message && s.executionId === executionId).map((s) => s.at);
  const warnings = () => logs.filter((l) => l.level >= 40).map((l) => l.msg);
  return { clock, deadlines, listening, resends, resend, times, warnings };
}

describe("WorkResends", () => {
  it("sends every RESEND_MS, a chain per (execution, message), until the chain says so or is ended", async () => {
    const { clock, deadlines, resends, resend, times } = setup();
    let asking = true;
    resends.keep(
      "AskForBid",
      A,
      resend("AskForBid", A, () => asking),
    );
    resends.keep("CancelExecution", A, resend("CancelExecution", A));
    resends.keep("CancelExecution", B, resend("CancelExecution", B));
    // Kept again (a replayed step): the same chain, its next send moved, not a second one.
    await clock.advance(1_000);
    resends.keep("CancelExecution", B, resend("CancelExecution", B));
    expect(resends.has("CancelExecution", B)).toBe(true);
    await clock.advance(1_000);
    asking = false;
    await clock.advance(2_000);
    resends.end("CancelExecution", A);
    await clock.advance(4_000);
    resends.end("CancelExecution", B);
    await clock.advance(10_000);
    expect(RESEND_MS).toBe(2_000);
    expect(times("AskForBid", A)).toEqual([2_000, 4_000]);
    expect(times("CancelExecution", A)).toEqual([2_000, 4_000]);
    expect(times("CancelExecution", B)).toEqual([3_000, 5_000, 7_000]);
    expect(resends.has("AskForBid", A)).toBe(false);
    expect(deadlines.size).toBe(0);
  });

  it("sends no more once its bound passes, and says so", async () => {
    const { clock, deadlines, resends, resend, times, warnings } = setup();
    resends.keep("CancelExecution", A, resend("CancelExecution", A), true, clock.now() + 7_000);
    await clock.advance(30_000);
    expect(times("CancelExecution", A)).toEqual([2_000, 4_000, 6_000]);
    expect(resends.has("CancelExecution", A)).toBe(false);
    expect(deadlines.size).toBe(0);
    expect(warnings()).toEqual(["a node did not answer CancelExecution within the answer bound; it is no longer sent"]);
  });

  it("withholds while the transport is down, sends it once back; a chain published before keeps its turn", async () => {
    const { clock, listening, resends, resend, times } = setup();
    resends.keep("RunExecution", A, resend("RunExecution", A));
    // B's first send was withheld (the transport was down then).
    resends.keep("RunExecution", B, resend("RunExecution", B), false);
    listening.transportDown("NATS connection lost");
    await clock.advance(1_000);
    listening.transportUp();
    await clock.advance(0);
    expect(times("RunExecution", B)).toEqual([1_000]);
    expect(times("RunExecution", A)).toEqual([]);
    await clock.advance(1_000);
    expect(times("RunExecution", A)).toEqual([2_000]);
    // Down across A's turn: withheld, sent the moment the transport is back.
    listening.transportDown("NATS connection lost");
    await clock.advance(2_500);
    expect(times("RunExecution", A)).toEqual([2_000]);
    listening.transportUp();
    await clock.advance(0);
    expect(times("RunExecution", A)).toEqual([2_000, 4_500]);
    expect(resends.withholding).toBe(false);
  });

  it("logs a resend that throws or rejects and goes on; one ended while under way is not armed again", async () => {
    const { clock, deadlines, resends, times, warnings } = setup();
    let failures = 2;
    const at: number[] = [];
    const t0 = clock.now();
    resends.keep("CancelExecution", A, () => {
      at.push(clock.now() - t0);
      if (failures-- > 0) throw new Error("NATS connection is closed");
      return true;
    });
    resends.keep("RunExecution", A, () => Promise.reject(new Error("store unavailable")));
    await clock.advance(6_000);
    expect(at).toEqual([2_000, 4_000, 6_000]);
    expect(warnings()).toEqual([
      "sending CancelExecution again failed",
      "sending RunExecution again failed",
      "sending CancelExecution again failed",
      "sending RunExecution again failed",
      "sending RunExecution again failed",
    ]);
    resends.end("CancelExecution", A);
    resends.end("RunExecution", A);
    // A resend that the node's answer overtakes: it ends the chain while the resend waits for the store.
    let answer = (): void => {};
    resends.keep("AskForBid", B, () => new Promise<boolean>((resolve) => (answer = () => resolve(true))));
    await clock.advance(2_000);
    resends.end("AskForBid", B);
    answer();
    await clock.advance(10_000);
    expect(times("AskForBid", B)).toEqual([]);
    expect(deadlines.size).toBe(0);
  });

  it("sends nothing again once stopped, and keeps no new chain", async () => {
    const { clock, deadlines, resends, resend, times } = setup();
    resends.keep("CancelExecution", A, resend("CancelExecution", A));
    resends.stop();
    resends.keep("CancelExecution", B, resend("CancelExecution", B));
    await clock.advance(RESEND_MS * 3);
    expect(times("CancelExecution", A)).toEqual([]);
    expect(times("CancelExecution", B)).toEqual([]);
    expect(resends.has("CancelExecution", B)).toBe(false);
    expect(deadlines.size).toBe(0);
  });
});
