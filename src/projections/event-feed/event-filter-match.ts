import type { EventFilter, RecordedEvent } from "../../events/store/event-store.ts";

/** What a filter looks at in an event, kept instead of the event where only the question is asked later. */
export interface FilterFacts {
  readonly type: string;
  readonly stream: string;
  readonly actorType: string | undefined;
  readonly actorId: string | undefined;
  /** Epoch ms; NaN for a time that does not parse, which is in no window. */
  readonly timeMs: number;
}

export function filterFactsOf(e: RecordedEvent): FilterFacts {
  const actor = e.metadata.actor as { type?: unknown; id?: unknown } | undefined;
  return {
    type: e.type,
    stream: e.stream,
    actorType: typeof actor?.type === "string" ? actor.type : undefined,
    actorId: typeof actor?.id === "string" ? actor.id : undefined,
    timeMs: new Date(e.time).getTime(),
  };
}

/**
 * Whether an event is in a store filter's selection, decided as EventStore.readFiltered decides it: every part given
 * holds, a list holds when one of its values does (an empty list matches nothing).
 */
export function matchesEventFilter(facts: FilterFacts, filter: EventFilter): boolean {
  if (filter.types && !filter.types.includes(facts.type)) return false;
  if (filter.streams && !filter.streams.includes(facts.stream)) return false;
  if (
    filter.actors &&
    !filter.actors.some((a) => facts.actorType === a.type && (a.id === undefined || facts.actorId === a.id))
  )
    return false;
  if (filter.since !== undefined && !(facts.timeMs >= filter.since)) return false;
  if (filter.until !== undefined && !(facts.timeMs <= filter.until)) return false;
  return true;
}
