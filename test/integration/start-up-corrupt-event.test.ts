import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { CorruptEventError } from "../../src/events/catalog/event-codec-errors.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import type { DomainEvent } from "../../src/projections/event-envelope.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { exampleEvent } from "../support/example-events.ts";
import { orchestratorConfig } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";
import { encodedEvent } from "../support/recorded-event.ts";
import { storesPerTest } from "../support/stores-per-test.ts";

/**
 * A stored event a read model cannot fold stops start-up in the catch-up phase at once, naming the event: not after
 * the lane's retries of a batch that cannot succeed, not after the stall bound. The orchestrator runs on a clock that
 * never moves, so neither a retry's pause nor the stall bound can pass.
 */
const nats = natsPerSuite();
const openStore = storesPerTest("shoal-corrupt-start-");
const running: RunningOrchestrator[] = [];
afterAll(async () => {
  for (const o of running) await o.stop();
});

/** A fresh DataDir whose store holds `events` (each its stream's first), the first of them no longer JSON. */
async function storeWithCorruptFirst(events: readonly (readonly [string, DomainEvent])[]) {
  const config = orchestratorConfig(nats.url);
  const store = openStore(config.DataDir);
  const positions: number[] = [];
  for (const [stream, event] of events)
    positions.push((await store.append(stream, [encodedEvent(stream, event)], "no_stream")).position);
  await store.close();
  const [stream] = events[0] as readonly [string, DomainEvent];
  const db = new Database(join(config.DataDir, "shoal.db"));
  db.prepare("UPDATE events SET data = ? WHERE stream = ? AND revision = 0").run('{"ID": "x", "Da', stream);
  db.close();
  return { config, stream, position: positions[0] as number };
}

describe("start-up on a store with a corrupt event", () => {
  for (const [kind, events] of [
    [
      "node",
      [
        ["node-n-1", exampleEvent("NodeRegistered", "n-1")],
        ["job-j-1", exampleEvent("JobSubmitted", "j-1")],
      ],
    ],
    [
      "job",
      [
        ["job-j-1", exampleEvent("JobSubmitted", "j-1")],
        ["node-n-1", exampleEvent("NodeRegistered", "n-1")],
      ],
    ],
  ] as const)
    it(`a corrupt ${kind} event stops start-up in the catch-up phase at once, naming its stream and position`, async () => {
      const { config, stream, position } = await storeWithCorruptFirst(events);
      const { logger, records } = capturedLogger();
      const clock = new ManualClock();
      const startedAt = clock.now();
      const failure = await startOrchestrator(config, logger, { clock }).then(
        (o) => void running.push(o),
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(CorruptEventError);
      expect((failure as Error).message).toMatch(
        new RegExp(`^stream ${stream}@0 \\(position ${position}\\): its data is not JSON: `),
      );
      expect(records.filter((r) => r.msg === "start-up phase failed").map((r) => r.phase)).toEqual(["catch up"]);
      expect(clock.now()).toBe(startedAt);
    }, 60_000);
});
