import { describe, expect, it } from "vitest";
import { feedFilterOf, feedStartOf, type EventFeedQuery } from "../../../src/api/events/event-feed-query.ts";
import { parseRfc3339 } from "../../../src/api/events/rfc3339-time.ts";

const refusal = (query: EventFeedQuery): string => {
  try {
    feedFilterOf(query);
  } catch (e) {
    return (e as Error).message;
  }
  return "accepted";
};

describe("RFC 3339 times", () => {
  it("reads a time with its offset, to the fraction of a millisecond", () => {
    expect(parseRfc3339("2026-11-29T10:00:00Z")).toBe(Date.UTC(2026, 10, 29, 10));
    expect(parseRfc3339("2026-11-29t10:00:00z")).toBe(Date.UTC(2026, 10, 29, 10));
    expect(parseRfc3339("2026-11-29T11:30:00.25+01:30")).toBe(Date.UTC(2026, 10, 29, 10, 0, 0, 250));
    expect(parseRfc3339("2026-11-29T09:00:00-01:00")).toBe(Date.UTC(2026, 10, 29, 10));
    expect(parseRfc3339("2026-11-29T10:00:00.0005Z")).toBeCloseTo(Date.UTC(2026, 10, 29, 10) + 0.5, 6);
    expect(parseRfc3339("2024-02-29T00:00:00Z")).toBe(Date.UTC(2024, 1, 29));
    expect(parseRfc3339("0001-01-01T00:00:00Z")).toBe(-62135596800000);
  });

  it("refuses what is not one: no offset, a day that does not exist, out-of-range fields, other formats", () => {
    for (const text of [
      "2026-11-29T10:00:00",
      "2026-11-29",
      "2026-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-11-29T24:00:00Z",
      "2026-11-29T10:60:00Z",
      "2026-11-29T10:00:60Z",
      "2026-11-29T10:00:00+24:00",
      "1764410400",
      "yesterday",
      " 2026-11-29T10:00:00Z",
    ])
      expect(parseRfc3339(text), text).toBeUndefined();
  });
});

describe("the feed's query", () => {
  it("takes repeated parameters and comma lists, once each", () => {
    expect(
      feedFilterOf({
        category: ["node", "job,node"],
        type: "NodeApproved, JobStopped",
        actor: ["operator:alice", "workflow", "node:n:1"],
        entity: "n-1",
      }),
    ).toEqual({
      categories: ["node", "job"],
      types: ["NodeApproved", "JobStopped"],
      actors: [{ type: "operator", id: "alice" }, { type: "workflow" }, { type: "node", id: "n:1" }],
      entities: ["n-1"],
    });
  });

  it("turns since and until into the whole milliseconds inside the window", () => {
    const at = Date.UTC(2026, 10, 29, 10);
    expect(feedFilterOf({ since: "2026-11-29T10:00:00.0001Z", until: "2026-11-29T10:00:00.9999Z" })).toEqual({
      since: at + 1,
      until: at + 999,
    });
  });

  it("refuses each wrong parameter by name", () => {
    expect(refusal({ category: "nodes" })).toMatch(/^query parameter category: unknown category "nodes"/);
    expect(refusal({ category: "node,," })).toMatch(/^query parameter category: an empty value/);
    expect(refusal({ type: "NodeApprovd" })).toMatch(/^query parameter type: unknown event type "NodeApprovd"/);
    expect(refusal({ type: "NodeLossQueued" })).toMatch(
      /^query parameter type: NodeLossQueued is an event of category workflow, which is not asked for/,
    );
    expect(refusal({ category: "job", type: "NodeApproved" })).toMatch(/^query parameter type: NodeApproved/);
    expect(refusal({ type: Array.from({ length: 21 }, (_, i) => `T${i}`) })).toBe(
      "query parameter type: at most 20 values, got 21",
    );
    expect(refusal({ entity: Array.from({ length: 11 }, (_, i) => `n-${i}`).join(",") })).toBe(
      "query parameter entity: at most 10 values, got 11",
    );
    expect(refusal({ actor: "admin:alice" })).toMatch(/^query parameter actor: "admin:alice" is not type\[:id\]/);
    expect(refusal({ actor: "operator:" })).toMatch(/^query parameter actor: "operator:" names no id/);
    expect(refusal({ since: "2026-11-29T10:00:00" })).toMatch(/^query parameter since: .* not an RFC 3339 time/);
    expect(refusal({ until: "soon" })).toMatch(/^query parameter until: "soon" is not an RFC 3339 time/);
    expect(refusal({ since: "2026-11-29T10:00:01Z", until: "2026-11-29T10:00:00Z" })).toBe(
      "query parameter since: 2026-11-29T10:00:01Z is after until 2026-11-29T10:00:00Z",
    );
    expect(() => feedStartOf({ after: "3", next_token: "4" })).toThrow(
      /^query parameter after: give after or next_token/,
    );
    expect(feedStartOf({ next_token: "4" })).toEqual({ field: "next_token", after: 4 });
    expect(feedStartOf({})).toEqual({ field: "after", after: 0 });
  });
});
