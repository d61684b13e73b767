import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { eventLink, eventLinkHex, ZERO_LINK, type LinkedFields } from "../../../../src/events/chain/event-link.ts";

const event: LinkedFields = {
  position: 7,
  id: "0192f3c4-aaaa-7000-8000-000000000001",
  stream: "node-n-1",
  revision: 3,
  type: "NodeApproved",
  time: "2026-11-29T10:00:00.000Z",
  data: '{"nodeId":"n-1"}',
  metadata: '{"actor":{"type":"operator","id":"alice"}}',
};
const previous = createHash("sha256").update("the link before").digest();

describe("eventLink", () => {
  it("is a SHA-256 digest that depends on nothing but its inputs", () => {
    const link = eventLink(previous, 6, event);
    expect(link).toHaveLength(32);
    expect(eventLink(Buffer.from(previous), 6, { ...event })).toEqual(link);
  });

  it("is SHA-256 over the documented text: each field as its UTF-8 byte length, a colon and the field", () => {
    const text =
      "13:shoal-chain/1" +
      `64:${previous.toString("hex")}1:61:7` +
      `36:${event.id}8:node-n-11:312:NodeApproved24:2026-11-29T10:00:00.000Z` +
      `16:${event.data}42:${event.metadata}`;
    expect(eventLink(previous, 6, event).toString("hex")).toBe(createHash("sha256").update(text).digest("hex"));
    // Lengths count bytes: "œ" and "é" are two each, so this six-character stream is 8.
    const accented = { ...event, stream: "nœud-é" };
    const other = text.replace("8:node-n-1", "8:nœud-é");
    expect(eventLink(previous, 6, accented).toString("hex")).toBe(createHash("sha256").update(other).digest("hex"));
  });

  it("in hex (what the writer chains with) is the same link, digit for digit, from the previous link's hex", () => {
    const accented = { ...event, stream: "nœud-é", data: '{"note":"ü"}' };
    for (const [before, e] of [
      [previous, event],
      [ZERO_LINK, accented],
    ] as const)
      expect(eventLinkHex(before.toString("hex"), 6, e)).toBe(eventLink(before, 6, e).toString("hex"));
  });

  it("changes when any field, the previous link or the previous position changes", () => {
    const link = eventLink(previous, 6, event).toString("hex");
    const changed: [string, Buffer][] = [
      ["previous link", eventLink(ZERO_LINK, 6, event)],
      ["previous position", eventLink(previous, 5, event)],
      ["position", eventLink(previous, 6, { ...event, position: 8 })],
      ["id", eventLink(previous, 6, { ...event, id: event.id.replace(/1$/, "2") })],
      ["stream", eventLink(previous, 6, { ...event, stream: "node-n-2" })],
      ["revision", eventLink(previous, 6, { ...event, revision: 4 })],
      ["type", eventLink(previous, 6, { ...event, type: "NodeRejected" })],
      ["time", eventLink(previous, 6, { ...event, time: "2026-11-29T10:00:00.001Z" })],
      ["data", eventLink(previous, 6, { ...event, data: '{"nodeId":"n-2"}' })],
      ["metadata", eventLink(previous, 6, { ...event, metadata: '{"actor":{"type":"operator","id":"bob"}}' })],
      ["data's whitespace", eventLink(previous, 6, { ...event, data: '{"nodeId": "n-1"}' })],
    ];
    for (const [what, other] of changed) expect(other.toString("hex"), what).not.toBe(link);
    expect(new Set(changed.map(([, l]) => l.toString("hex"))).size).toBe(changed.length);
  });

  it("keeps fields apart: text moved from one field to the next is a different link", () => {
    const a = eventLink(previous, 6, { ...event, stream: "node-n-1N", type: "odeApproved" });
    const b = eventLink(previous, 6, event);
    const c = eventLink(previous, 6, { ...event, data: '{"nodeId":"n-1"}{', metadata: event.metadata.slice(1) });
    expect(a.equals(b)).toBe(false);
    expect(c.equals(b)).toBe(false);
  });
});
