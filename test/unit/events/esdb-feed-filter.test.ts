import { EVENT_TYPE, STREAM_NAME, type Filter } from "@kurrent/kurrentdb-client";
import { describe, expect, it } from "vitest";
import { USER_EVENT_TYPES } from "../../../src/events/eventstoredb/esdb-event-store.ts";
import { serverFilterFor } from "../../../src/events/eventstoredb/esdb-server-filter.ts";
import { matchesFilter } from "../../../src/events/store/event-filter.ts";
import type { RecordedEvent } from "../../../src/events/store/event-store.ts";
import { filtersFor, naiveMatch, skewedLog } from "../../support/skewed-log.ts";

/** The regular expression of a filter on `on`, failing when the filter is on the other field. */
function regexOn(filter: Filter, on: typeof EVENT_TYPE | typeof STREAM_NAME): RegExp {
  expect(filter.filterOn).toBe(on);
  return new RegExp((filter as { regex: string }).regex);
}

/**
 * What is checked here is the server-side filter Shoal asks for (event types or stream names,
 * never both: the request holds one), and the part of the filter checked on the events that come
 * back; the read itself runs in the contract suite against the stand-in and a real server.
 */
describe("KurrentDB filtered reads: the server-side filter", () => {
  const request = (filter: Parameters<typeof serverFilterFor>[0]) => serverFilterFor(filter, USER_EVENT_TYPES);

  it("sends the types as a regular expression matching exactly those types", () => {
    const regex = regexOn(
      request({ types: ["NodeApproved", "JobQueued", "NodeApproved"], actors: [{ type: "operator" }] }),
      EVENT_TYPE,
    );
    for (const type of ["NodeApproved", "JobQueued"]) expect(regex.test(type), type).toBe(true);
    for (const type of ["NodeApprovedX", "XNodeApproved", "JobQueue", "NodeRegistered", "CheckpointStored", "$>"])
      expect(regex.test(type), type).toBe(false);
  });

  it("sends the streams, when there are any, as a regular expression on stream names instead, taken literally", () => {
    const streams = ["node-a.b", "job-(x)", "execution-1+2", "node-with space#"];
    const regex = regexOn(request({ streams, types: ["NodeApproved"] }), STREAM_NAME);
    for (const s of streams) expect(regex.test(s), s).toBe(true);
    for (const s of ["node-aXb", "job-x", "execution-11112", "node-a.b-2", "$$node-a.b", "node-with space"])
      expect(regex.test(s), s).toBe(false);
  });

  it("sends the filter that keeps system events and checkpoints out when neither types nor streams are asked", () => {
    expect(request({ actors: [{ type: "operator", id: "alice" }], since: 0 })).toMatchObject({
      filterOn: EVENT_TYPE,
      regex: USER_EVENT_TYPES,
    });
  });
});

describe("KurrentDB filtered reads: what is checked on each event", () => {
  it("agrees with a naive filter on every filter alone and combined over a skewed log", () => {
    const log = skewedLog("u", 1200, 11);
    const events: RecordedEvent[] = log.map(({ stream, event }, i) => ({
      id: event.id,
      type: event.type,
      stream,
      revision: 0,
      position: i + 1,
      time: event.metadata.time as string,
      data: event.data,
      metadata: event.metadata,
    }));
    for (const filter of filtersFor("u", log)) {
      const expected = events.filter((e) => naiveMatch(e, filter)).map((e) => e.position);
      expect(
        events.filter((e) => matchesFilter(e, filter)).map((e) => e.position),
        JSON.stringify(filter),
      ).toEqual(expected);
    }
  });

  it("takes an event whose metadata cannot be read as having no actor", () => {
    const damaged = {
      id: "x",
      type: "NodeApproved",
      stream: "node-x",
      revision: 0,
      position: 1,
      time: "2026-01-01T00:00:00.000Z",
      data: {},
      get metadata(): Record<string, unknown> {
        throw new Error("its metadata is not JSON");
      },
    };
    expect(matchesFilter(damaged, { types: ["NodeApproved"] })).toBe(true);
    expect(matchesFilter(damaged, { actors: [{ type: "operator" }] })).toBe(false);
  });
});
