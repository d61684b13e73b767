import type { Decider } from "../../machines/decider.ts";
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

export const streamOf = (kind: { readonly category: string }, id: string): string => `${kind.category}-${id}`;
