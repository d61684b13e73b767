import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NodeViews } from "../../../src/projections/node-views.ts";
import { NodeStateSnapshotter } from "../../../src/snapshots/node-state-snapshotter.ts";
import { capturedLogger } from "../../support/captured-logger.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { ManualClock } from "../../support/manual-clock.ts";
import { envelopeOf } from "../../support/recorded-event.ts";

describe("the node-state snapshotter's log", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "shoal-snapshotter-test-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("says whether a write was due or the stop's own, and the encoding's own time beside its wall time", async () => {
    const { logger, messages } = capturedLogger();
    const views = new NodeViews();
    const snapshotter = new NodeStateSnapshotter({
      path: join(dir, "node-states.msgpack"),
      views: () => views.all(),
      clock: new ManualClock(),
      logger,
      everyEvents: 1,
    });
    const handle = (nodeId: string, position: number) => {
      const envelope = envelopeOf(`node-${nodeId}`, exampleEvent("NodeRegistered", nodeId), position);
      views.handleEnvelope(envelope);
      snapshotter.handled([envelope]);
    };
    handle("n-1", 1);
    // Caught up with a change not yet written: a write is due at once.
    snapshotter.start();
    // While it runs: the stop waits for it, then writes what came after it.
    handle("n-2", 2);
    await snapshotter.stop();

    const written = messages("node-state snapshot written");
    expect(written.map((r) => [r.cause, r.position, r.nodes])).toEqual([
      ["due", 1, 1],
      ["stop", 2, 2],
    ]);
    for (const r of written) {
      expect(typeof r.encodeOwnMs).toBe("number");
      // Rounded each: the slices are part of the wall time.
      expect(r.encodeOwnMs as number).toBeLessThanOrEqual((r.encodeMs as number) + 1);
    }
  });
});
