import { describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../../src/events/store/event-store.ts";
import { toClusterEvent } from "../../../src/projections/cluster-event.ts";
import { EncodedEvents } from "../../../src/projections/encoded-events.ts";
import { CatchUpTurns } from "../../../src/projections/event-stream/catch-up-turns.ts";
import { sseFrame } from "../../../src/projections/event-stream/sse-frame.ts";

/** A stored event whose data holds text JSON escapes or encodes in several bytes. */
const stored = (position: number, note = "plain"): RecordedEvent => ({
  id: `e-${position}`,
  type: "NodeLabelsSet",
  stream: "node-n-1",
  revision: position - 1,
  position,
  time: "2026-11-29T10:00:00.000Z",
  data: { Labels: { note }, i: position },
  metadata: { time: "2026-11-29T10:00:00.000Z", actor: { type: "operator", id: "alice" }, reason: "r" },
});

// What the publisher sent and the hub framed, each on its own, before they shared one encoding.
const ownJson = (e: RecordedEvent) => new TextEncoder().encode(JSON.stringify(toClusterEvent(e)));

describe("EncodedEvents", () => {
  it("gives the NATS payload and the SSE message each publisher encoded on its own, from one encoding", () => {
    const encoded = new EncodedEvents(1024 * 1024);
    const notes = ["plain", "zürich 東京 🚀", 'line\nbreak\u2028sep "quoted" \\', "lone \ud800 surrogate", ""];
    notes.forEach((note, i) => {
      const e = stored(1_000_000 + i, note);
      expect(Buffer.compare(encoded.frame(e), sseFrame(e))).toBe(0);
      expect(Buffer.compare(encoded.json(e), ownJson(e))).toBe(0);
      // The payload is the message's own bytes, not a copy.
      const [frame, json] = [encoded.frame(e), encoded.json(e)];
      expect(json.buffer).toBe(frame.buffer);
      expect(json.byteOffset + json.length).toBe(frame.byteOffset + frame.length - 2);
    });
    expect(encoded.encodings).toBe(notes.length);
    // Each event asked for four times, encoded at the first.
    expect(encoded.hits).toBe(notes.length * 3);
  });

  it("keeps the newest encoded within its bound; an event no longer held is encoded again, to the same bytes", () => {
    const size = sseFrame(stored(1)).length;
    const encoded = new EncodedEvents(size * 3);
    const first = encoded.frame(stored(1));
    for (let p = 2; p <= 10; p++) encoded.frame(stored(p));
    expect(encoded.heldBytes).toBeLessThanOrEqual(size * 3);
    expect([encoded.encodings, encoded.hits]).toEqual([10, 0]);
    encoded.frame(stored(10));
    expect([encoded.encodings, encoded.hits]).toEqual([10, 1]);
    const again = encoded.frame(stored(1));
    expect(encoded.encodings).toBe(11);
    expect(again).not.toBe(first);
    expect(Buffer.compare(again, first)).toBe(0);
    expect(Buffer.compare(encoded.json(stored(1)), ownJson(stored(1)))).toBe(0);
  });

  it("with no room keeps nothing and encodes every ask", () => {
    const encoded = new EncodedEvents(0);
    encoded.json(stored(1));
    encoded.frame(stored(1));
    expect([encoded.encodings, encoded.hits]).toEqual([2, 0]);
    expect(encoded.heldBytes).toBe(0);
  });
});

describe("CatchUpTurns", () => {
  it("lets `limit` go at once and the others in the order they asked, each as a turn is given back", async () => {
    const turns = new CatchUpTurns(2);
    const went: number[] = [];
    const asks = [0, 1, 2, 3, 4].map((i) => turns.take().then(() => went.push(i)));
    await Promise.resolve();
    await Promise.resolve();
    expect(went).toEqual([0, 1]);
    expect([turns.taken, turns.waiting]).toEqual([2, 3]);
    turns.release();
    await asks[2];
    expect(went).toEqual([0, 1, 2]);
    turns.release();
    turns.release();
    await Promise.all(asks);
    expect(went).toEqual([0, 1, 2, 3, 4]);
    expect([turns.taken, turns.waiting]).toEqual([2, 0]);
    turns.release();
    turns.release();
    expect(turns.taken).toBe(0);
    expect(() => new CatchUpTurns(0)).toThrow(/not a whole number at least 1/);
    expect(() => new CatchUpTurns(1.5)).toThrow(/not a whole number/);
    const unbounded = new CatchUpTurns(Infinity);
    await Promise.all([1, 2, 3].map(() => unbounded.take()));
    expect([unbounded.taken, unbounded.waiting]).toEqual([3, 0]);
  });
});
