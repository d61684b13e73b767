import { eventTypeFilter, streamNameFilter, type Filter } from "@kurrent/kurrentdb-client";
import type { EventFilter } from "../store/event-store.ts";

/**
 * A name as a literal in a regular expression that .NET (the server's) and JavaScript read alike:
 * the metacharacters (and `#`, which .NET's Regex.Escape escapes too) with a backslash, whitespace
 * as \uXXXX.
 */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\#]|\s/g, (c) =>
    /\s/.test(c) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}` : `\\${c}`,
  );
}

/** A regular expression matching exactly these names. */
export function exactly(names: readonly string[]): string {
  return `^(?:${[...new Set(names)].map(literal).join("|")})$`;
}

/**
 * The part of a filter KurrentDB can apply itself (a regular expression, .NET's, on the server):
 * it takes one of event types or stream names per read, so streams (an entity's few events) go
 * to the server before types. The whole filter is still checked on every event that comes back
 * (actor and time always are).
 */
export function serverFilterFor(filter: EventFilter, userEventTypes: string): Filter {
  if (filter.streams !== undefined && filter.streams.length > 0)
    return streamNameFilter({ regex: exactly(filter.streams) });
  if (filter.types !== undefined && filter.types.length > 0) return eventTypeFilter({ regex: exactly(filter.types) });
  return eventTypeFilter({ regex: userEventTypes });
}
