import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { InvalidEventError } from "../../../src/events/catalog/event-codec-errors.ts";
import { EventMetadata } from "../../../src/events/catalog/event-metadata.ts";
import {
  decodeNodeEvent,
  encodeNodeEvent,
  encodeNodeEventBySchema,
} from "../../../src/events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import type { NewEvent, RecordedEvent } from "../../../src/events/store/event-store.ts";
import { computeInfo } from "../../support/fixtures.ts";

const metadata = {
  time: "2026-01-01T00:00:00.000Z",
  actor: { type: "operator" as const, id: "alice" },
  correlationId: "c-1",
  causationId: "c-1",
};

/** What a store would hand back to a reader for this appended event. */
const asRecorded = (e: NewEvent): RecordedEvent => ({
  ...e,
  stream: "node-x",
  revision: 0,
  position: 1,
  time: metadata.time,
  data: JSON.parse(JSON.stringify(e.data)),
  metadata: JSON.parse(JSON.stringify(e.metadata)),
});

describe("encodeNodeEvent: nothing unreadable is ever stored", () => {
  it("encodes a valid event that the reader decodes back to the same event", () => {
    const event: NodeEvent = {
      type: "NodeRegistered",
      data: { NodeID: "n1", NodeType: "Compute", Info: computeInfo("n1"), Membership: "PENDING", Lifecycle: 1 },
    };
    const encoded = encodeNodeEvent(event, metadata, "id-1");
    expect(encoded).toMatchObject({ id: "id-1", type: "NodeRegistered", metadata: { ...metadata, schemaVersion: 1 } });
    expect(decodeNodeEvent(asRecorded(encoded))).toEqual(event);
  });

  it("refuses what its own schema rejects, saying what and why", () => {
    const cases: [string, NodeEvent, RegExp][] = [
      [
        "a bad node id inside the info",
        {
          type: "NodeRegistered",
          data: {
            NodeID: "bad.id",
            NodeType: "Compute",
            Info: computeInfo("bad.id"),
            Membership: "PENDING",
            Lifecycle: 1,
          },
        },
        /refusing to store an invalid NodeRegistered \(data\):[\s\S]*a node id is 1-128/,
      ],
      [
        "a number JSON cannot carry",
        { type: "NodeBecameUnhealthy", data: { NodeID: "n1", LastHeartbeat: null, DisconnectTimeoutMs: Number.NaN } },
        /invalid NodeBecameUnhealthy \(data\)[\s\S]*DisconnectTimeoutMs/,
      ],
      [
        "a wrong literal",
        { type: "NodeApproved", data: { NodeID: "n1", Previous: "MAYBE" as never } },
        /invalid NodeApproved \(data\)[\s\S]*Previous/,
      ],
      [
        "a zero lifecycle",
        {
          type: "NodeRegistered",
          data: { NodeID: "n1", NodeType: "Compute", Info: computeInfo("n1"), Membership: "PENDING", Lifecycle: 0 },
        },
        /Lifecycle/,
      ],
    ];
    for (const [name, event, message] of cases) {
      expect(() => encodeNodeEvent(event, metadata, "id"), name).toThrow(InvalidEventError);
      expect(() => encodeNodeEvent(event, metadata, "id"), name).toThrow(message);
    }
  });

  it("checks the metadata too, and keeps fields the schema does not name", () => {
    const event: NodeEvent = { type: "NodeApproved", data: { NodeID: "n1", Previous: "PENDING" } };
    expect(() => encodeNodeEvent(event, { ...metadata, actor: { type: "robot" as never, id: "r" } }, "id")).toThrow(
      /\(metadata\)[\s\S]*actor/,
    );
    expect(() => encodeNodeEvent(event, { ...metadata, correlationId: undefined as never }, "id")).toThrow(
      /\(metadata\)[\s\S]*correlationId/,
    );
    const extra = encodeNodeEvent(event, { ...metadata, ...{ source: "test" } }, "id");
    expect(extra.metadata).toMatchObject({ source: "test" });
  });

  it("stores a workflow as the actor and as a cordon's By, and reads back what an older Shoal stored as system", () => {
    const drain = { type: "workflow" as const, id: "node-drain" };
    const cordoned = (By: typeof drain | { type: "system"; id: string }): NodeEvent => ({
      type: "NodeCordoned",
      data: { NodeID: "n1", Reason: "moving work", By },
    });
    for (const encode of [encodeNodeEvent, encodeNodeEventBySchema]) {
      const today = encode(cordoned(drain), { ...metadata, actor: drain }, "id-1");
      expect(today.metadata).toMatchObject({ actor: drain });
      expect(decodeNodeEvent(asRecorded(today))).toEqual(cordoned(drain));
    }
    // An event an older Shoal stored: the workflow as a system actor, in the metadata and in By.
    const older = { type: "system" as const, id: "workflow-node-drain" };
    const stored = asRecorded(encodeNodeEvent(cordoned(older), { ...metadata, actor: older }, "id-2"));
    expect(decodeNodeEvent(stored)).toEqual(cordoned(older));
    expect(Schema.decodeUnknownSync(EventMetadata)(stored.metadata).actor).toEqual(older);
  });
});
