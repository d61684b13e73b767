import { describe, expect, it } from "vitest";
import { CatchUpProgress } from "../../../src/projections/catch-up-progress.ts";
import { capturedLogger } from "../../support/captured-logger.ts";
import { ManualClock } from "../../support/manual-clock.ts";

const MESSAGE = "recovering nodes: replaying events";

describe("a start-up catch-up's progress", () => {
  it("logs about once a second until a batch reaches the head, then nothing", async () => {
    const { logger, messages } = capturedLogger();
    const clock = new ManualClock();
    const progress = new CatchUpProgress({ logger, clock, head: 5_000, message: MESSAGE });
    progress.begin();
    progress.handled(512, 512);
    await clock.advance(999);
    progress.handled(1024, 1024);
    expect(messages(MESSAGE)).toHaveLength(0);
    await clock.advance(1);
    progress.handled(1536, 1536);
    expect(messages(MESSAGE)).toEqual([
      expect.objectContaining({ events: 1536, position: 1536, head: 5_000, perSecond: 1536 }),
    ]);
    await clock.advance(1_000);
    progress.handled(5_000, 5_000);
    await clock.advance(5_000);
    progress.handled(6_000, 5_100);
    expect(messages(MESSAGE)).toHaveLength(1);
    expect(progress.elapsed().ms).toBe(7_000);
  });

  it("ends the wait with the first failure before the head, naming it; a failure after it changes nothing", async () => {
    const { logger } = capturedLogger();
    const clock = new ManualClock();
    const progress = new CatchUpProgress({ logger, clock, head: 100, message: MESSAGE });
    // Failed before anyone waits: no unhandled rejection, the wait that follows gets it.
    progress.failed(new Error("stream node-a@1 (position 3): its data is not JSON"));
    await expect(progress.until(new Promise<void>(() => undefined))).rejects.toThrow("stream node-a@1");

    const caughtUp = new CatchUpProgress({ logger, clock, head: 100, message: MESSAGE });
    caughtUp.handled(100, 10);
    caughtUp.failed(new Error("later"));
    // Caught up later than the failure was reported: the failure, had it counted, would have won the race.
    const later = new Promise<void>((resolve) => setTimeout(resolve, 20));
    await expect(caughtUp.until(later)).resolves.toBeUndefined();
  });
});
