import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { EventMetadata } from "../../../../src/events/catalog/event-metadata.ts";
import { InvalidEventError } from "../../../../src/events/catalog/event-codec-errors.ts";
import { encodeNodeEvent, encodeNodeEventBySchema } from "../../../../src/events/catalog/node-event-codec.ts";
import { NODE_EVENT_SCHEMAS, type NodeEvent } from "../../../../src/events/catalog/node-events.ts";
import type { NodeInfo } from "../../../../src/events/catalog/node-info.ts";
import { isJsonValue } from "../../../../src/events/catalog/schema-fast-path/json-value.ts";
import {
  NOT_VOUCHED,
  schemaFastPath,
  type SchemaFastPath,
} from "../../../../src/events/catalog/schema-fast-path/schema-fast-path.ts";
import { computeInfo } from "../../../support/fixtures.ts";
import { seededRandom } from "../../../support/seeded-random.ts";

const fastPath = (schema: Schema.Schema.Any) => schemaFastPath(schema) as SchemaFastPath;

function withoutCompute(info: NodeInfo): NodeInfo {
  const { ComputeNodeInfo: _, ...rest } = info;
  return rest;
}

const KEY = `U${"A".repeat(55)}`;
const metadata = {
  time: "2026-01-01T00:00:00.000Z",
  actor: { type: "operator" as const, id: "alice" },
  reason: "test",
  correlationId: "c-1",
  causationId: "c-2",
};

/** One valid event of every type: the fast path must vouch for each (or it would speed up nothing). */
const VALID: NodeEvent[] = [
  {
    type: "NodeRegistered",
    data: {
      NodeID: "n1",
      NodeType: "Compute",
      Info: computeInfo("n1", { zone: "a" }),
      Membership: "PENDING",
      Lifecycle: 1,
    },
  },
  { type: "NodeApproved", data: { NodeID: "n1", Previous: "PENDING" } },
  { type: "NodeRejected", data: { NodeID: "n1", Previous: "APPROVED" } },
  { type: "NodeDeleted", data: { NodeID: "n1", Membership: "REJECTED" } },
  {
    type: "NodeInfoUpdated",
    data: { NodeID: "n1", Info: withoutCompute(computeInfo("n1")), Changed: ["Labels", "Hostname"] },
  },
  { type: "NodeBecameUnhealthy", data: { NodeID: "n1", LastHeartbeat: null, DisconnectTimeoutMs: 15_000 } },
  {
    type: "NodeBecameUnknown",
    data: { NodeID: "n1", LastHeartbeat: "2026-01-01T00:00:00.000Z", UnknownTimeoutMs: 30_000 },
  },
  { type: "NodeBecameHealthy", data: { NodeID: "n1", Previous: "UNKNOWN" } },
  { type: "NodeCredentialBound", data: { NodeID: "n1", PublicKey: KEY, Reinstated: false } },
  { type: "NodeCredentialRevoked", data: { NodeID: "n1", PublicKey: KEY, Reason: "deleted" } },
];

class Box {
  constructor(readonly value: number) {}
}

/** Values that JSON changes, that a schema refuses, or that are fine: the corners a fast path gets wrong. */
const AWKWARD: unknown[] = [
  undefined,
  null,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -0,
  0,
  -1,
  1.5,
  2 ** 53,
  "",
  "bad.id",
  "x".repeat(300),
  "PENDING",
  "HEALTHY",
  "Compute",
  KEY,
  `${KEY}x`,
  true,
  {},
  [],
  ["docker"],
  [undefined],
  new Date(0),
  new Box(1),
  new Map(),
  () => 1,
  Symbol("s"),
  10n,
  { toJSON: () => "x" },
];

/** Every path to a value inside `value` (objects and arrays), the root included. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...at, i])));
  else if (value !== null && typeof value === "object")
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clone(v)]));
  }
  return value;
}

/** A copy of `value` with one change at `path`: replaced, deleted, or given an extra key. */
function mutate(value: unknown, path: (string | number)[], change: { replace: unknown } | "delete" | "extra"): unknown {
  const root = { v: clone(value) };
  let parent: Record<string | number, unknown> = root;
  let key: string | number = "v";
  for (const step of path) {
    parent = parent[key] as Record<string | number, unknown>;
    key = step;
  }
  if (change === "delete") delete parent[key];
  else if (change === "extra") {
    const target = parent[key];
    if (target !== null && typeof target === "object" && !Array.isArray(target))
      (target as Record<string, unknown>).extra = "kept?";
    else parent[key] = { extra: 1 };
  } else parent[key] = change.replace;
  return root.v;
}

/** Effect's verdict on an event, as the store would keep it, or the error it gives. */
type Outcome = { ok: true; json: string } | { ok: false; error: string; message: string };

function outcome(encode: () => unknown): Outcome {
  try {
    return { ok: true, json: JSON.stringify(encode()) };
  } catch (err) {
    return { ok: false, error: (err as Error).name, message: (err as Error).message };
  }
}

describe("the schema fast path agrees with Effect on every value it vouches for", () => {
  it("vouches for a valid event of every type and for the host's metadata", () => {
    for (const event of VALID) {
      expect(fastPath(NODE_EVENT_SCHEMAS[event.type]).encode(event.data), event.type).not.toBe(NOT_VOUCHED);
    }
    const full = { ...metadata, schemaVersion: 1 };
    expect(isJsonValue(full)).toBe(true);
    expect(fastPath(EventMetadata).encode(full)).toEqual(full);
  });

  it("encodes exactly what Effect encodes, and refuses with Effect's message, across thousands of mutated events", () => {
    const random = seededRandom(6);
    let vouched = 0;
    let refused = 0;
    for (let round = 0; round < 4000; round++) {
      const base = random.pick(VALID);
      const onData = random.next() < 0.8;
      const target: unknown = onData ? base.data : metadata;
      const path = random.pick(paths(target));
      const roll = random.next();
      const changed = mutate(
        target,
        path,
        roll < 0.1 ? "delete" : roll < 0.2 ? "extra" : { replace: random.pick(AWKWARD) },
      );
      const event = (onData ? { type: base.type, data: changed } : base) as NodeEvent;
      const meta = (onData ? metadata : changed) as typeof metadata;
      const expected = outcome(() => encodeNodeEventBySchema(event, meta, "id"));
      const where = `${base.type} ${onData ? "data" : "metadata"} at ${JSON.stringify(path)}`;
      expect(
        outcome(() => encodeNodeEvent(event, meta, "id")),
        where,
      ).toEqual(expected);
      if (expected.ok) vouched++;
      else if (expected.error === new InvalidEventError("").name) refused++;
    }
    // Both sides were exercised.
    expect(vouched).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(500);
  });

  it("what it returns survives a JSON round trip unchanged and decodes with the schema", () => {
    const random = seededRandom(60);
    for (let round = 0; round < 2000; round++) {
      const base = random.pick(VALID);
      const changed = mutate(base.data, random.pick(paths(base.data)), { replace: random.pick(AWKWARD) });
      const schema = NODE_EVENT_SCHEMAS[base.type] as Schema.Schema<unknown>;
      const out = fastPath(schema).encode(changed);
      if (out === NOT_VOUCHED) continue;
      expect(isJsonValue(out)).toBe(true);
      const roundTrip = JSON.parse(JSON.stringify(out)) as unknown;
      expect(roundTrip).toStrictEqual(out);
      expect(Schema.decodeUnknownEither(schema)(roundTrip)._tag).toBe("Right");
    }
  });

  it("has no fast path for a schema with a transformation: Effect decides everything", () => {
    expect(schemaFastPath(Schema.Struct({ n: Schema.NumberFromString }))).toBeUndefined();
  });

  it("does not count what JSON would change as JSON", () => {
    for (const v of [
      undefined,
      Number.NaN,
      -0,
      Number.POSITIVE_INFINITY,
      new Date(0),
      [undefined],
      { a: undefined },
      new Box(1),
      () => 1,
      1n,
    ]) {
      expect(isJsonValue(v), String(v)).toBe(false);
    }
    for (const v of [null, 0, "", "x", [], {}, { a: [1, "b", null, { c: true }] }, Object.create(null) as object])
      expect(isJsonValue(v)).toBe(true);
  });
});
