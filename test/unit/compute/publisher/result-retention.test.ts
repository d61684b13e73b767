import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  REMOVAL_NOTE_MS,
  RESULT_SWEEP_MS,
  ResultRetention,
} from "../../../../src/compute/publisher/result-retention.ts";
import { capturedLogger } from "../../../support/captured-logger.ts";
import { tempDir } from "../../../support/fixtures.ts";
import { ManualClock } from "../../../support/manual-clock.ts";

const DAY = 24 * 3_600_000;
const START = Date.parse("2026-03-01T00:00:00Z");

/** A results directory with an archive per execution, each written at `at` (the node's clock) with `bytes` bytes. */
function resultsDir(archives: Record<string, { at: number; bytes: number }>): string {
  const dir = join(tempDir("shoal-retention-"), "results");
  mkdirSync(join(dir, "staging", "e-running"), { recursive: true });
  for (const [id, { at, bytes }] of Object.entries(archives)) {
    const path = join(dir, `${id}.tar.gz`);
    writeFileSync(path, Buffer.alloc(bytes));
    utimesSync(path, at / 1000, at / 1000);
  }
  return dir;
}

function retention(dir: string, rule: { periodMs: number; maxTotalBytes: number }) {
  const clock = new ManualClock(START);
  const { logger, messages } = capturedLogger();
  const r = new ResultRetention({ nodeId: "n-1", dir, rule, clock, logger });
  return { r, clock, removedLogs: () => messages("removed a published result") };
}

describe("the node's retention of its published results, on its clock", () => {
  it("removes an archive once it is older than the period, at the next sweep, and says when and why", async () => {
    const dir = resultsDir({ "e-old": { at: START - 6 * DAY, bytes: 10 }, "e-new": { at: START, bytes: 10 } });
    const { r, clock, removedLogs } = retention(dir, { periodMs: 7 * DAY, maxTotalBytes: 0 });
    await r.start();
    expect(existsSync(join(dir, "e-old.tar.gz"))).toBe(true);
    expect(r.removedMessage("e-old")).toBeUndefined();

    await clock.advance(DAY - RESULT_SWEEP_MS);
    await r.idle();
    expect(existsSync(join(dir, "e-old.tar.gz"))).toBe(true);
    await clock.advance(RESULT_SWEEP_MS);
    await r.idle();
    expect(existsSync(join(dir, "e-old.tar.gz"))).toBe(false);
    expect(existsSync(join(dir, "e-new.tar.gz"))).toBe(true);
    expect(existsSync(join(dir, "staging", "e-running"))).toBe(true);
    expect(r.removedMessage("e-old")).toBe(
      "results of execution e-old were removed from node n-1 at 2026-03-02T00:00:00.000Z, " +
        "after 168h (Compute.Publishers.Local.RetentionPeriod)",
    );
    expect(r.removedMessage("e-new")).toBeUndefined();
    expect(removedLogs()).toEqual([
      expect.objectContaining({
        executionId: "e-old",
        bytes: 10,
        why: "after 168h (Compute.Publishers.Local.RetentionPeriod)",
      }),
    ]);
    r.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it("removes the oldest beyond the total at start, and forgets a removal after REMOVAL_NOTE_MS", async () => {
    const dir = resultsDir({
      "e-1": { at: START - 3000, bytes: 400 },
      "e-2": { at: START - 2000, bytes: 400 },
      "e-3": { at: START - 1000, bytes: 400 },
    });
    const { r, clock, removedLogs } = retention(dir, { periodMs: 0, maxTotalBytes: 1000 });
    await r.start();
    expect(readdirSync(dir).sort()).toEqual(["e-1.removed.json", "e-2.tar.gz", "e-3.tar.gz", "staging"]);
    expect(r.removedMessage("e-1")).toMatch(/held more than 1000 \(Compute\.Publishers\.Local\.MaxTotalBytes\)/);
    expect(removedLogs()).toHaveLength(1);

    // Each sweep arms the next once it ends: the one after REMOVAL_NOTE_MS forgets the removal.
    await clock.advance(REMOVAL_NOTE_MS - RESULT_SWEEP_MS);
    await r.idle();
    expect(r.removedMessage("e-1")).toBeDefined();
    await clock.advance(RESULT_SWEEP_MS);
    await r.idle();
    expect(readdirSync(dir).sort()).toEqual(["e-2.tar.gz", "e-3.tar.gz", "staging"]);
    expect(r.removedMessage("e-1")).toBeUndefined();
    r.stop();
  });

  it("keeps everything with no limits, and a node that never published has nothing to sweep", async () => {
    const dir = resultsDir({ "e-1": { at: START - 400 * DAY, bytes: 400 } });
    const { r, clock } = retention(dir, { periodMs: 0, maxTotalBytes: 0 });
    await r.start();
    await clock.advance(DAY);
    await r.idle();
    expect(existsSync(join(dir, "e-1.tar.gz"))).toBe(true);
    r.stop();
    const empty = retention(join(tempDir("shoal-retention-"), "results"), { periodMs: DAY, maxTotalBytes: 1 });
    await empty.r.start();
    await empty.clock.advance(2 * DAY);
    await empty.r.idle();
    expect(empty.removedLogs()).toEqual([]);
    empty.r.stop();
  });
});
