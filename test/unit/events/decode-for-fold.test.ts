import { Arbitrary, FastCheck, type Schema } from "effect";
import { describe, expect, it } from "vitest";
import { CorruptEventError } from "../../../src/events/catalog/event-codec-errors.ts";
import {
  decodeNodeEvent,
  decodeNodeEventForFold,
  encodeNodeEvent,
} from "../../../src/events/catalog/node-event-codec.ts";
import {
  NODE_EVENT_SCHEMAS,
  NODE_EVENT_TYPES,
  type NodeEvent,
  type NodeEventType,
} from "../../../src/events/catalog/node-events.ts";
import type { RecordedEvent } from "../../../src/events/store/event-store.ts";
import { JUNK, mutate } from "../../support/damaged-json.ts";
import { seededRandom } from "../../support/seeded-random.ts";

const metadata = {
  time: "2026-01-01T00:00:00.000Z",
  actor: { type: "system" as const, id: "t" },
  correlationId: "c",
  causationId: "c",
};
const EVERY_TYPE: ReadonlySet<NodeEventType> = new Set(NODE_EVENT_TYPES);
const NO_TYPE: ReadonlySet<NodeEventType> = new Set();

/** A recorded event whose data is read through a getter that counts its reads, as SQLite's parses on first use. */
function recorded(type: string, data: unknown, schemaVersion: unknown = 1) {
  let reads = 0;
  const event: RecordedEvent & { readonly reads: number } = {
    id: "e",
    type,
    stream: "node-x",
    revision: 3,
    position: 4,
    time: metadata.time,
    get data() {
      reads++;
      return data;
    },
    metadata: { ...metadata, schemaVersion },
    get reads() {
      return reads;
    },
  };
  return event;
}

type Outcome = { ok: true; json: string } | { ok: false; message: string };

function outcome(read: () => unknown): Outcome {
  try {
    return { ok: true, json: JSON.stringify(read()) };
  } catch (e) {
    if (!(e instanceof CorruptEventError)) throw e;
    return { ok: false, message: e.message };
  }
}

/** One random change: no object at all (one time in eight), else a part replaced, dropped, added or reordered. */
function damage(value: unknown, random: ReturnType<typeof seededRandom>): unknown {
  return typeof value !== "object" || value === null || random.int(8) === 0 ? random.pick(JUNK) : mutate(value, random);
}

describe("decodeNodeEventForFold agrees with decodeNodeEvent", () => {
  for (const type of NODE_EVENT_TYPES) {
    it(`${type}: random valid and damaged data give the same data or the same CorruptEventError, when the data is read`, () => {
      const schema = NODE_EVENT_SCHEMAS[type] as Schema.Schema<unknown>;
      const random = seededRandom(100 + NODE_EVENT_TYPES.indexOf(type));
      const samples = FastCheck.sample(Arbitrary.make(schema), {
        numRuns: 100,
        seed: 7 + NODE_EVENT_TYPES.indexOf(type),
      });
      let good = 0;
      let bad = 0;
      for (const sample of samples) {
        let stored: unknown;
        try {
          stored = encodeNodeEvent({ type, data: sample } as NodeEvent, metadata, "id").data;
        } catch {
          stored = sample;
        }
        for (const data of [stored, ...Array.from({ length: 8 }, () => damage(stored, random))]) {
          const expected = outcome(() => decodeNodeEvent(recorded(type, data)).data);
          if (expected.ok) good++;
          else bad++;
          // Decoded on use (every type, not only those a fold skips): nothing read until asked, then the same answer,
          // every time.
          const lazySource = recorded(type, data);
          const lazy = decodeNodeEventForFold(lazySource, EVERY_TYPE);
          expect(lazy.type).toBe(type);
          expect(lazySource.reads).toBe(0);
          expect(
            outcome(() => lazy.data),
            JSON.stringify(data),
          ).toEqual(expected);
          expect(outcome(() => lazy.data)).toEqual(expected);
          if (expected.ok)
            expect(JSON.stringify(lazy)).toBe(JSON.stringify({ type, data: JSON.parse(expected.json) as unknown }));
          // Decoded at once: decodeNodeEvent's own answer, thrown by the call itself.
          expect(outcome(() => decodeNodeEventForFold(recorded(type, data), NO_TYPE).data)).toEqual(expected);
        }
      }
      expect(good).toBeGreaterThan(50);
      expect(bad).toBeGreaterThan(100);
    });
  }

  it("refuses an unknown type or schema version at once, with decodeNodeEvent's message, whatever is decoded on use", () => {
    for (const [type, version] of [
      ["NodeExploded", 1],
      ["NodeBecameHealthy", 2],
      ["NodeBecameHealthy", "1"],
      ["NodeApproved", undefined],
    ] as const) {
      const expected = outcome(() => decodeNodeEvent(recorded(type, {}, version)));
      expect(expected.ok).toBe(false);
      expect(outcome(() => decodeNodeEventForFold(recorded(type, {}, version), EVERY_TYPE))).toEqual(expected);
    }
  });
});
