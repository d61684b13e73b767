import type { EntityEvents } from "./entity-event-codec.ts";
import { executionEvents } from "./execution-event-codec.ts";
import { jobEvents } from "./job-event-codec.ts";
import { nodeEvents } from "./node-event-codec.ts";

/**
 * Every entity kind's events: the one list a kind is registered in. The processors' envelope decodes the streams of
 * these categories (and no others) into domain events, the NATS publisher publishes them (workflow and bookkeeping
 * streams are not), and the store refuses a history written with newer schema versions of their types.
 */
export const ENTITY_EVENTS = [nodeEvents, jobEvents, executionEvents] as const;

/** The events of a kind's entry (of each, for a union of entries). */
export type EventOf<Events> = Events extends EntityEvents<infer Event> ? Event : never;

/**
 * A domain event of any entity kind: event type names are unique across kinds, so `type` alone
 * narrows it to its kind's event and data.
 */
export type DomainEvent = EventOf<(typeof ENTITY_EVENTS)[number]>;

/** A registered kind's events, of whichever kind. */
export type AnyEntityEvents = (typeof ENTITY_EVENTS)[number];

const BY_CATEGORY: ReadonlyMap<string, AnyEntityEvents> = new Map(
  ENTITY_EVENTS.map((events) => [events.category, events]),
);

/** The kind whose streams are `<category>-<id>`; undefined for a category of no entity (a workflow's, bookkeeping). */
export const entityEventsOf = (category: string): AnyEntityEvents | undefined => BY_CATEGORY.get(category);
