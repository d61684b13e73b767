import { describe, expect, it } from "vitest";
import { Listening } from "../../../src/actors/listening.ts";
import { ManualClock } from "../../support/manual-clock.ts";

/** Listening: the one answer to "can the orchestrator hear its nodes now, and since when". */
describe("Listening", () => {
  function watched(clock = new ManualClock(0)) {
    const listening = new Listening(clock);
    const seen: string[] = [];
    listening.onResume((why) => seen.push(`resume ${why} at ${clock.now()}`));
    listening.onPause((reason) => seen.push(`pause ${reason}`));
    return { clock, listening, seen };
  }

  it("does not listen while starting, even when its transport comes and goes meanwhile", async () => {
    const { clock, listening, seen } = watched();
    listening.transportDown("embedded nats-server exited");
    listening.transportUp();
    expect(listening.since).toBeUndefined();
    await clock.advance(5000);
    listening.begin();
    expect(listening.since).toBe(5000);
    expect(seen).toEqual(["pause embedded nats-server exited", "resume listening for heartbeats at 5000"]);
  });

  it("begun while its transport is down, listens from when the transport is back", async () => {
    const { clock, listening, seen } = watched();
    listening.transportDown("NATS connection lost");
    listening.begin();
    expect(listening.since).toBeUndefined();
    expect(listening.transportDownReason).toBe("NATS connection lost");
    await clock.advance(700);
    listening.transportUp();
    expect(listening.since).toBe(700);
    expect(listening.transportDownReason).toBeUndefined();
    expect(seen).toEqual(["pause NATS connection lost", "resume transport back at 700"]);
  });

  it("pauses and resumes once per change, and calls listeners in the order they were registered", async () => {
    const { clock, listening, seen } = watched();
    listening.onResume((why) => seen.push(`second ${why}`));
    listening.begin();
    listening.begin();
    listening.transportDown("a");
    listening.transportDown("b");
    expect(listening.transportDownReason).toBe("a");
    await clock.advance(10);
    listening.transportUp();
    listening.transportUp();
    expect(seen).toEqual([
      "resume listening for heartbeats at 0",
      "second listening for heartbeats",
      "pause a",
      "resume transport back at 10",
      "second transport back",
    ]);
  });

  it("begun() listens from construction, telling nobody", () => {
    const clock = new ManualClock(42);
    expect(Listening.begun(clock).since).toBe(42);
  });
});
