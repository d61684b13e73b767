import type { Decider } from "../../machines/decider.ts";
import type { EntityEvents } from "../events/catalog/entity-event-codec.ts";
import type { NewEvent, RecordedEvent } from "../events/store/event-store.ts";
import type { ShoalError } from "../errors/shoal-error.ts";

/**
 * What the generic actor host needs to know about one kind of entity: its rules (a decider),
 * where its streams live, how its events are stored and read back, and how its refusals map
 * onto Shoal's closed set of errors.
 */
export interface EntityKind<State, Command, Event, Refusal> {
  /** Stream category: an entity's stream is `<category>-<id>`. */
  readonly category: string;
  readonly decider: Decider<State, Command, Event, Refusal>;
  encode(event: Event, metadata: Readonly<Record<string, unknown>>, id: string): NewEvent;
  decode(recorded: RecordedEvent): Event;
  refusalError(refusal: Refusal): ShoalError;
}

/**
 * A registered kind as the actor host sees it: its category and codec are its catalog entry's (ENTITY_EVENTS), so
 * the streams its actors write are the ones the processors decode and the publisher publishes.
 */
export function entityKind<State, Command, Event extends { readonly type: string; readonly data: unknown }, Refusal>(
  events: EntityEvents<Event>,
  rules: Pick<EntityKind<State, Command, Event, Refusal>, "decider" | "refusalError">,
): EntityKind<State, Command, Event, Refusal> {
  return {
    category: events.category,
    decider: rules.decider,
    encode: events.encode,
    decode: events.decode,
    refusalError: rules.refusalError,
  };
}

export const streamOf = (kind: { readonly category: string }, id: string): string => `${kind.category}-${id}`;
