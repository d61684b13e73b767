import { describe, expect, it } from "vitest";
import { EVENT_TYPE } from "@kurrent/kurrentdb-client";
import {
  CHECKPOINT_TYPE,
  SUBSCRIPTION_FILTER,
  USER_EVENT_TYPES,
} from "../../../src/events/eventstoredb/esdb-event-store.ts";
import { NODE_EVENT_TYPES } from "../../../src/events/catalog/node-events.ts";

/** The filter Shoal asks the server for; the reads themselves run in the contract suite. */
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
});
