import { Arbitrary, FastCheck, ParseResult, Schema } from "effect";
import { describe, expect, it } from "vitest";
import { CorruptEventError } from "../../../../src/events/catalog/event-codec-errors.ts";
import { decodeNodeEvent, encodeNodeEvent } from "../../../../src/events/catalog/node-event-codec.ts";
import {
  NODE_EVENT_SCHEMAS,
  NODE_EVENT_TYPES,
  type NodeEvent,
  type NodeEventType,
} from "../../../../src/events/catalog/node-events.ts";
import { schemaFastPath } from "../../../../src/events/catalog/schema-fast-path/schema-fast-path.ts";
import type { RecordedEvent } from "../../../../src/events/store/event-store.ts";
import { mutate } from "../../../support/damaged-json.ts";
import { seededRandom } from "../../../support/seeded-random.ts";

const metadata = {
  time: "2026-01-01T00:00:00.000Z",
  actor: { type: "system" as const, id: "t" },
  correlationId: "c",
  causationId: "c",
};

/** The read side of a schema's fast path: whether a reader may keep `input` as Effect's decode of it. */
const storedCheck = (schema: Schema.Schema.Any) => schemaFastPath(schema)?.isStored;

const recorded = (type: string, data: unknown): RecordedEvent => ({
  id: "e",
  type,
  stream: "node-x",
  revision: 3,
  position: 4,
  time: metadata.time,
  data,
  metadata: { ...metadata, schemaVersion: 1 },
});

type Outcome = { ok: true; json: string } | { ok: false; message: string };

/** What the reader gave before the compiled check: Effect's decode of the data, and its message. */
function effectOutcome(type: NodeEventType, data: unknown): Outcome {
  const result = Schema.decodeUnknownEither(NODE_EVENT_SCHEMAS[type] as Schema.Schema<unknown>)(data);
  return result._tag === "Right"
    ? { ok: true, json: JSON.stringify(result.right) }
    : { ok: false, message: `stream node-x@3: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}` };
}

function readerOutcome(type: NodeEventType, data: unknown): Outcome {
  try {
    const event = decodeNodeEvent(recorded(type, data));
    expect(event.type).toBe(type);
    return { ok: true, json: JSON.stringify(event.data) };
  } catch (e) {
    if (!(e instanceof CorruptEventError)) throw e;
    return { ok: false, message: e.message };
  }
}

describe("the compiled check of stored node events gives Effect's answers", () => {
  it("compiles for every node event type, and declines what it does not mirror", () => {
    for (const type of NODE_EVENT_TYPES) expect(storedCheck(NODE_EVENT_SCHEMAS[type]), type).toBeDefined();
    expect(storedCheck(Schema.NumberFromString)).toBeUndefined();
    expect(
      storedCheck(Schema.Union(Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.String }))),
    ).toBeUndefined();
  });

  for (const type of NODE_EVENT_TYPES) {
    it(`${type}: random valid events and random damage to them decode alike, with the same errors`, () => {
      const schema = NODE_EVENT_SCHEMAS[type] as Schema.Schema<unknown>;
      const check = storedCheck(schema) as (u: unknown) => boolean;
      const random = seededRandom(NODE_EVENT_TYPES.indexOf(type) + 1);
      const samples = FastCheck.sample(Arbitrary.make(schema), {
        numRuns: 150,
        seed: 42 + NODE_EVENT_TYPES.indexOf(type),
      });
      let storable = 0;
      let refused = 0;
      for (const sample of samples) {
        // What Shoal itself stores takes the shortcut, and reads back as it was written.
        let stored: unknown;
        try {
          stored = encodeNodeEvent({ type, data: sample } as NodeEvent, metadata, "id").data;
        } catch {
          stored = undefined;
        }
        if (stored !== undefined) {
          storable++;
          expect(check(stored), JSON.stringify(stored)).toBe(true);
          expect(readerOutcome(type, stored)).toEqual(effectOutcome(type, stored));
        }
        for (const input of [
          JSON.parse(JSON.stringify(sample ?? null)) as unknown,
          ...Array.from({ length: 12 }, () => mutate(stored ?? sample, random)),
        ]) {
          const expected = effectOutcome(type, input);
          expect(readerOutcome(type, input), JSON.stringify(input)).toEqual(expected);
          if (check(input))
            expect(expected, "the check never vouches for what Effect would change or refuse").toEqual({
              ok: true,
              json: JSON.stringify(input),
            });
          if (!expected.ok) refused++;
        }
      }
      // Both sides of the comparison were exercised.
      expect(storable).toBeGreaterThan(50);
      expect(refused).toBeGreaterThan(100);
    });
  }

  it("leaves values JSON cannot hold to Effect (an undefined optional field)", () => {
    const data = { NodeID: "n1", LastHeartbeat: null, DisconnectTimeoutMs: 1, extra: undefined };
    const check = storedCheck(NODE_EVENT_SCHEMAS.NodeBecameUnhealthy) as (u: unknown) => boolean;
    expect(check(data)).toBe(false);
    expect(readerOutcome("NodeBecameUnhealthy", data)).toEqual(effectOutcome("NodeBecameUnhealthy", data));
    const info = {
      NodeID: "n1",
      NodeType: "Compute",
      Hostname: "h",
      Labels: {},
      ComputeNodeInfo: undefined,
      BacalhauVersion: { GitVersion: "v", GOOS: "l", GOARCH: "a" },
    };
    expect(storedCheck(NODE_EVENT_SCHEMAS.NodeInfoUpdated)?.({ NodeID: "n1", Info: info, Changed: [] })).toBe(false);
    expect(readerOutcome("NodeInfoUpdated", { NodeID: "n1", Info: info, Changed: [] })).toEqual(
      effectOutcome("NodeInfoUpdated", { NodeID: "n1", Info: info, Changed: [] }),
    );
  });
});
