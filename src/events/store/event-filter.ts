import type { EventFilter, ReadFilteredOptions, RecordedEvent } from "./event-store.ts";

function checkList(name: string, list: readonly unknown[] | undefined, item: (v: unknown) => boolean): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) throw new TypeError(`filter.${name} must be a list, got ${typeof list}`);
  list.forEach((v, i) => {
    if (!item(v)) throw new TypeError(`filter.${name}[${i}] is not valid: ${JSON.stringify(v)}`);
  });
}

const isText = (v: unknown) => typeof v === "string" && v.length > 0;

/**
 * A filtered read's arguments as every adapter takes them; anything else is refused naming the
 * field, before the store is read. (The API has already said it to its caller in its own words:
 * this guards the port.)
 */
export function checkFilteredRead(filter: EventFilter, options: ReadFilteredOptions): void {
  checkList("types", filter.types, isText);
  checkList("streams", filter.streams, isText);
  checkList(
    "actors",
    filter.actors,
    (a) =>
      typeof a === "object" &&
      a !== null &&
      isText((a as { type?: unknown }).type) &&
      ((a as { id?: unknown }).id === undefined || isText((a as { id?: unknown }).id)),
  );
  for (const name of ["since", "until"] as const) {
    const v = filter[name];
    if (v !== undefined && !Number.isFinite(v)) throw new RangeError(`filter.${name} must be a time in ms, got ${v}`);
  }
  if (!Number.isSafeInteger(options.maxCount) || options.maxCount < 1)
    throw new RangeError(`maxCount must be a positive integer, got ${options.maxCount}`);
  for (const name of ["after", "through", "scanBudget"] as const) {
    const v = options[name];
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0))
      throw new RangeError(`${name} must be a position (an integer ≥ 0), got ${v}`);
  }
}

/** Whether a filter can match nothing whatever is stored: one of its lists is empty. */
export function matchesNothing(filter: EventFilter): boolean {
  return filter.types?.length === 0 || filter.streams?.length === 0 || filter.actors?.length === 0;
}

/** The actor of a stored event, or undefined when its metadata names none (or cannot be read). */
function actorOf(event: RecordedEvent): { type: unknown; id: unknown } | undefined {
  let metadata: Readonly<Record<string, unknown>>;
  try {
    metadata = event.metadata;
  } catch {
    return undefined;
  }
  const actor = metadata.actor;
  return typeof actor === "object" && actor !== null ? (actor as { type: unknown; id: unknown }) : undefined;
}

/** The time window alone (epoch ms, inclusive): an event whose time does not parse is in no window. */
export function inTimeWindow(time: string, filter: EventFilter): boolean {
  if (filter.since === undefined && filter.until === undefined) return true;
  const t = Date.parse(time);
  return (filter.since === undefined || t >= filter.since) && (filter.until === undefined || t <= filter.until);
}

/** The filter decided on one event in memory: what a scanning adapter applies, and what the others must agree with. */
export function matchesFilter(event: RecordedEvent, filter: EventFilter): boolean {
  if (filter.types !== undefined && !filter.types.includes(event.type)) return false;
  if (filter.streams !== undefined && !filter.streams.includes(event.stream)) return false;
  if (filter.actors !== undefined) {
    const actor = actorOf(event);
    if (actor === undefined) return false;
    if (!filter.actors.some((a) => a.type === actor.type && (a.id === undefined || a.id === actor.id))) return false;
  }
  return inTimeWindow(event.time, filter);
}
