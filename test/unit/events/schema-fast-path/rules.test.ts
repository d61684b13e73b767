import { Either, Schema } from "effect";
import { describe, expect, it } from "vitest";
import {
  decodeNodeEvent,
  encodeNodeEvent,
  encodeNodeEventBySchema,
} from "../../../../src/events/catalog/node-event-codec.ts";
import { NODE_EVENT_SCHEMAS, type NodeEvent } from "../../../../src/events/catalog/node-events.ts";
import {
  NOT_VOUCHED,
  schemaFastPath,
  type SchemaFastPath,
} from "../../../../src/events/catalog/schema-fast-path/schema-fast-path.ts";
import type { RecordedEvent } from "../../../../src/events/store/event-store.ts";
import { computeInfo } from "../../../support/fixtures.ts";

/*
 * The rules the two earlier fast paths (a write-side encoder and a read-side stored check) held
 * differently, each pinned against Effect on both sides of the one compiler.
 */

const fastPath = (schema: Schema.Schema.Any) => schemaFastPath(schema) as SchemaFastPath;

/** JSON with key order, -0 kept apart from 0: "the same value" as a reader would see it. */
const exact = (value: unknown) => JSON.stringify(value, (_, v: unknown) => (Object.is(v, -0) ? "-0" : v));

/**
 * Whatever the fast path vouches for, Effect agrees with: on write its encode gives the same
 * value (and JSON keeps it), on read its decode gives the input back unchanged.
 */
function expectAgreement(any: Schema.Schema.Any, value: unknown): void {
  const schema = any as Schema.Schema<unknown>;
  const fast = fastPath(schema);
  const encoded = fast.encode(value);
  if (encoded !== NOT_VOUCHED) {
    const effect = Schema.encodeUnknownEither(schema)(value);
    expect(Either.isRight(effect), exact(value)).toBe(true);
    expect(exact(encoded)).toBe(exact(Either.getOrThrow(effect)));
    expect(JSON.parse(JSON.stringify(encoded))).toStrictEqual(encoded);
  }
  if (fast.isStored(value)) {
    const effect = Schema.decodeUnknownEither(schema)(value);
    expect(Either.isRight(effect), exact(value)).toBe(true);
    expect(exact(Either.getOrThrow(effect))).toBe(exact(value));
    expect(JSON.parse(JSON.stringify(value))).toStrictEqual(value);
  }
}

const metadata = {
  time: "2026-01-01T00:00:00.000Z",
  actor: { type: "system" as const, id: "t" },
  correlationId: "c",
  causationId: "c",
};

const recorded = (type: string, data: unknown): RecordedEvent => ({
  id: "e",
  type,
  stream: "node-n1",
  revision: 0,
  position: 1,
  time: metadata.time,
  data,
  metadata: { ...metadata, schemaVersion: 1 },
});

const decodedByEffect = (type: keyof typeof NODE_EVENT_SCHEMAS, data: unknown) =>
  Either.getOrThrow(Schema.decodeUnknownEither(NODE_EVENT_SCHEMAS[type] as Schema.Schema<unknown>)(data));

describe("one set of rules for writing and reading", () => {
  it("numbers: NaN, ±Infinity and -0 are vouched for on neither side (the old stored check took them)", () => {
    // Effect gives each back as itself, but JSON does not: refusing costs the reader nothing
    // (JSON.parse makes no NaN or Infinity; Shoal stores 0 for -0) and keeps one rule.
    const fast = fastPath(Schema.Number);
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0]) {
      expect(fast.encode(n), String(n)).toBe(NOT_VOUCHED);
      expect(fast.isStored(n), String(n)).toBe(false);
      expectAgreement(Schema.Number, n);
    }
    expect(fast.encode(0)).toBe(0);
    expect(fast.isStored(0)).toBe(true);
    // Read from another writer, -0 is still Effect's answer; written, it is stored as 0.
    const data = { NodeID: "n1", LastHeartbeat: null, DisconnectTimeoutMs: -0 };
    const read = decodeNodeEvent(recorded("NodeBecameUnhealthy", data)).data as typeof data;
    expect(Object.is(read.DisconnectTimeoutMs, -0)).toBe(true);
    const written = encodeNodeEvent({ type: "NodeBecameUnhealthy", data }, metadata, "id").data as typeof data;
    expect(Object.is(written.DisconnectTimeoutMs, 0)).toBe(true);
  });

  it("structs take plain objects only (the old stored check kept a Date where Effect gives {})", () => {
    const schema = Schema.Struct({ a: Schema.optional(Schema.Struct({ b: Schema.optional(Schema.Number) })) });
    const input = { a: new Date(0) };
    expect(fastPath(schema).isStored(input)).toBe(false);
    expect(fastPath(schema).encode(input)).toBe(NOT_VOUCHED);
    expect(Schema.decodeUnknownSync(schema)(input)).toStrictEqual({ a: {} });
    // An array is no struct to Effect, whatever its prototype.
    const disguised = Object.setPrototypeOf([], Object.prototype) as unknown;
    expect(fastPath(schema).encode({ a: disguised })).toBe(NOT_VOUCHED);
    expect(fastPath(schema).isStored({ a: disguised })).toBe(false);
    expectAgreement(schema, { a: disguised });
    // Through the reader: MaxCapacity (every field optional) given a Date reads as Effect's {}.
    const info = computeInfo("n1");
    const data = {
      NodeID: "n1",
      NodeType: "Compute",
      Info: { ...info, ComputeNodeInfo: { ...info.ComputeNodeInfo, MaxCapacity: new Date(0) } },
      Membership: "PENDING",
      Lifecycle: 1,
    };
    const read = decodeNodeEvent(recorded("NodeRegistered", data));
    expect(read.data).toStrictEqual(decodedByEffect("NodeRegistered", data));
    expect(
      (read.data as { Info: { ComputeNodeInfo: { MaxCapacity: unknown } } }).Info.ComputeNodeInfo.MaxCapacity,
    ).toStrictEqual({});
  });

  it("an empty struct has no fast path (the old encoder gave {} where Effect gives the input back)", () => {
    expect(Schema.encodeUnknownSync(Schema.Struct({}))({ a: 1 })).toStrictEqual({ a: 1 });
    expect(schemaFastPath(Schema.Struct({}))).toBeUndefined();
  });

  it('a struct field named "__proto__" has no fast path (the old stored check kept a key Effect drops)', () => {
    const schema = Schema.Struct({ ["__proto__"]: Schema.String });
    const input = JSON.parse('{"__proto__":"x"}') as unknown;
    expect(JSON.stringify(Schema.decodeUnknownSync(schema)(input))).toBe("{}");
    expect(schemaFastPath(schema)).toBeUndefined();
  });

  it("a union of plain values and one struct has both sides (the old encoder had none for it)", () => {
    const schema = Schema.NullOr(Schema.Struct({ a: Schema.String }));
    const fast = fastPath(schema);
    expect(fast.encode({ a: "x", b: 1 })).toStrictEqual({ a: "x" });
    expect(fast.encode(null)).toBeNull();
    expect(fast.encode("x")).toBe(NOT_VOUCHED);
    expect(fast.isStored({ a: "x" })).toBe(true);
    expect(fast.isStored({ a: "x", b: 1 })).toBe(false);
    expect(fast.isStored(null)).toBe(true);
    for (const v of [
      null,
      undefined,
      "x",
      1,
      {},
      { a: "x" },
      { a: "x", b: 1 },
      { b: 1, a: "x" },
      { a: 1 },
      [],
      new Date(0),
    ])
      expectAgreement(schema, v);
  });

  it("an optional struct (a union of a struct and undefined) vouches for neither an undefined value nor a present undefined key", () => {
    const schema = Schema.Struct({ s: Schema.optional(Schema.Struct({ a: Schema.String })) });
    const fast = fastPath(schema);
    expect(fast.encode({ s: undefined })).toBe(NOT_VOUCHED);
    expect(fast.isStored({ s: undefined })).toBe(false);
    expect(fast.encode({})).toStrictEqual({});
    expect(fast.isStored({})).toBe(true);
    expect(fast.encode({ s: { a: "x", z: 1 } })).toStrictEqual({ s: { a: "x" } });
    expect(fast.isStored({ s: { a: "x" } })).toBe(true);
    for (const v of [
      {},
      { s: undefined },
      { s: null },
      { s: { a: "x" } },
      { s: { a: "x", z: 1 } },
      { s: {} },
      { s: [] },
    ])
      expectAgreement(schema, v);
  });

  it("a record key its key schema refuses is dropped by Effect, and vouched for by neither side", () => {
    const schema = Schema.Record({ key: Schema.String.pipe(Schema.minLength(1)), value: Schema.String });
    const input = { "": "x", a: "y" };
    expect(Schema.decodeUnknownSync(schema)(input)).toStrictEqual({ a: "y" });
    expect(fastPath(schema).encode(input)).toBe(NOT_VOUCHED);
    expect(fastPath(schema).isStored(input)).toBe(false);
    expect(fastPath(schema).isStored({ a: "y" })).toBe(true);
    // Through the codec: a label with an empty key is dropped on write and on read, as Effect does.
    const data = { NodeID: "n1", Info: { ...computeInfo("n1"), Labels: { "": "x", zone: "a" } }, Changed: ["Labels"] };
    const event = { type: "NodeInfoUpdated", data } as NodeEvent;
    expect(encodeNodeEvent(event, metadata, "id")).toStrictEqual(encodeNodeEventBySchema(event, metadata, "id"));
    expect(decodeNodeEvent(recorded("NodeInfoUpdated", data)).data).toStrictEqual(
      decodedByEffect("NodeInfoUpdated", data),
    );
  });

  it("literals JSON cannot hold have no fast path (the old stored check compiled them)", () => {
    expect(schemaFastPath(Schema.Literal(1n))).toBeUndefined();
    expect(schemaFastPath(Schema.Struct({ n: Schema.Literal(1n) }))).toBeUndefined();
  });

  it("a refinement sees what Effect's parse of its base gives: no excess key reaches it on either side", () => {
    const schema = Schema.Struct({ a: Schema.String }).pipe(Schema.filter((o) => Object.keys(o).length === 1));
    const fast = fastPath(schema);
    expect(fast.encode({ a: "x", b: 1 })).toStrictEqual({ a: "x" });
    expect(fast.isStored({ a: "x", b: 1 })).toBe(false);
    expect(fast.isStored({ a: "x" })).toBe(true);
    for (const v of [{ a: "x" }, { a: "x", b: 1 }, { b: 1 }]) expectAgreement(schema, v);
  });

  it("an unknown value is vouched for only when it is plain JSON all the way down, as Effect gives it back", () => {
    const schema = Schema.Struct({ Params: Schema.Record({ key: Schema.String, value: Schema.Unknown }) });
    const fast = fastPath(schema);
    const plain = { Params: { URL: "http://x/a.csv", Deep: { n: [1, "2", null, true] } } };
    expect(fast.encode(plain)).toStrictEqual(plain);
    expect(fast.isStored(plain)).toBe(true);
    for (const odd of [new Date(0), Number.NaN, -0, undefined, () => 1, new Map()]) {
      const value = { Params: { v: odd } };
      expect(fast.encode(value)).toBe(NOT_VOUCHED);
      expect(fast.isStored(value)).toBe(false);
      expectAgreement(schema, value);
    }
    expectAgreement(schema, plain);
  });
});
