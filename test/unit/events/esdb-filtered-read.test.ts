import { describe, expect, it } from "vitest";
import { EVENT_TYPE } from "@eventstore/db-client";
import {
  CHECKPOINT_TYPE,
  SUBSCRIPTION_FILTER,
  USER_EVENT_TYPES,
} from "../../../src/events/eventstoredb/esdb-event-store.ts";
import { filteredReadAllRequest } from "../../../src/events/eventstoredb/read-all-filtered.ts";
import { NODE_EVENT_TYPES } from "../../../src/events/catalog/node-events.ts";

/**
 * EventStoreDB cannot run here (the contract suite runs against it when
 * SHOAL_TEST_EVENTSTORE_URL is set); what can be checked without it is what Shoal asks the
 * server for: the filter and the filtered read request.
 */
describe("EventStoreDB: the server-side filter that keeps checkpoints and system events out", () => {
  it("lets every domain event type through and stops $-types and checkpoints", () => {
    // .NET's Regex.IsMatch (the server's) and JavaScript agree on this anchored lookahead.
    const allowed = (type: string) => new RegExp(USER_EVENT_TYPES).test(type);
    for (const type of NODE_EVENT_TYPES) expect(allowed(type), type).toBe(true);
    for (const type of [CHECKPOINT_TYPE, "$metadata", "$>", "$streamDeleted", "$statsCollected"])
      expect(allowed(type), type).toBe(false);
    expect(allowed(`${CHECKPOINT_TYPE}Later`)).toBe(true);
  });

  it("subscribes to $all with the same event-type filter, so a subscriber's own checkpoint saves never reach it", () => {
    expect(SUBSCRIPTION_FILTER).toMatchObject({ filterOn: EVENT_TYPE, regex: USER_EVENT_TYPES });
  });

  it("asks for a forward, counted, filtered read of $all (not a subscription)", () => {
    const fromStart = filteredReadAllRequest({
      from: "start",
      maxCount: 512,
      eventTypeRegex: USER_EVENT_TYPES,
    }).toObject().options!;
    expect(fromStart).toMatchObject({
      all: { start: {} },
      readDirection: 0,
      resolveLinks: false,
      count: "512",
      filter: { eventType: { regex: USER_EVENT_TYPES }, count: {}, checkpointintervalmultiplier: 1 },
      uuidOption: { string: {} },
    });
    expect(fromStart.subscription).toBeUndefined();
    expect(fromStart.noFilter).toBeUndefined();
    const fromPosition = filteredReadAllRequest({
      from: { commit: 42n, prepare: 41n },
      maxCount: 1,
      eventTypeRegex: "^x",
    }).toObject().options!;
    expect(fromPosition.all).toEqual({ position: { commitPosition: "42", preparePosition: "41" } });
    expect(fromPosition.count).toBe("1");
  });

  it("asks for the newest matching event with one backwards read from the end of $all (the store's head)", () => {
    const head = filteredReadAllRequest({
      from: "end",
      maxCount: 512,
      eventTypeRegex: USER_EVENT_TYPES,
      backwards: true,
    }).toObject().options!;
    expect(head).toMatchObject({
      all: { end: {} },
      readDirection: 1,
      count: "512",
      filter: { eventType: { regex: USER_EVENT_TYPES }, count: {} },
    });
    expect(head.all?.start).toBeUndefined();
  });
});
