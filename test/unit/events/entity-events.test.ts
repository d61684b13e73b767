import { describe, expect, it } from "vitest";
import { executionKind } from "../../../src/actors/execution-kind.ts";
import { jobKind } from "../../../src/actors/job-kind.ts";
import { nodeKind } from "../../../src/actors/node-kind.ts";
import { ENTITY_EVENTS, entityEventsOf, type DomainEvent } from "../../../src/events/catalog/entity-events.ts";
import { NODE_REACTION_RECORD_VERSIONS } from "../../../src/events/catalog/node-reaction-record-codec.ts";
import { SCHEMA_VERSIONS } from "../../../src/events/catalog/schema-versions.ts";
import { WORKFLOW_STEP_VERSIONS } from "../../../src/events/catalog/workflow-step-codec.ts";
import { EventEnvelope } from "../../../src/projections/event-envelope.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { recordedEvent } from "../../support/recorded-event.ts";

const typesOf = (events: (typeof ENTITY_EVENTS)[number]) => Object.keys(events.versions) as DomainEvent["type"][];

/** The entity kinds are registered once, in the catalog's list; what reads a kind's events derives it from there. */
describe("ENTITY_EVENTS", () => {
  it("names each kind's category once, and each event type in one kind only (a type names its kind)", () => {
    const categories = ENTITY_EVENTS.map((events) => events.category);
    expect(new Set(categories).size).toBe(categories.length);
    const types = ENTITY_EVENTS.flatMap(typesOf);
    expect(new Set(types).size).toBe(types.length);
    for (const events of ENTITY_EVENTS) expect(entityEventsOf(events.category)).toBe(events);
  });

  it("gives the store's newer-schema check every registered type at its kind's version, and the workflows' records", () => {
    const expected: Record<string, number> = { ...NODE_REACTION_RECORD_VERSIONS, ...WORKFLOW_STEP_VERSIONS };
    for (const events of ENTITY_EVENTS) {
      for (const type of typesOf(events)) expected[type] = (events.versions as Record<string, number>)[type]!;
    }
    expect(SCHEMA_VERSIONS).toEqual(expected);
  });

  it("decodes every type of each registered kind on its kind's streams, typed as that kind's, and nothing elsewhere", () => {
    for (const events of ENTITY_EVENTS) {
      for (const type of typesOf(events)) {
        const event = exampleEvent(type, "x-1");
        const envelope = new EventEnvelope(recordedEvent(`${events.category}-x-1`, event));
        const decoded = envelope.of(events);
        // Read through `data`: a type decoded on read keeps it behind a getter.
        expect({ type: decoded?.type, data: decoded?.data }, type).toEqual(event);
        expect(envelope.event).toBe(decoded);
        for (const other of ENTITY_EVENTS) if (other !== events) expect(envelope.of(other)).toBeUndefined();
        // The same stored event on a stream of no registered kind is no domain event, and is not decoded.
        const elsewhere = new EventEnvelope({ ...envelope.recorded, stream: "volume-x-1" });
        expect(elsewhere.event, type).toBeUndefined();
      }
    }
    expect(entityEventsOf("volume")).toBeUndefined();
    expect(entityEventsOf("workflow")).toBeUndefined();
  });

  it("is what the actor host writes with: each kind's category and codec are its catalog entry's", () => {
    const kinds = [nodeKind, jobKind, executionKind];
    expect(kinds.map((kind) => kind.category)).toEqual(ENTITY_EVENTS.map((events) => events.category));
    for (const kind of kinds) {
      const events = entityEventsOf(kind.category)!;
      expect(kind.encode).toBe(events.encode);
      expect(kind.decode).toBe(events.decode);
    }
  });
});
