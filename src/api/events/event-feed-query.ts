import { Schema } from "effect";
import { badRequest } from "../../errors/shoal-error.ts";
import { FEED_ACTOR_TYPES, type FeedActor, type FeedActorType } from "../../projections/event-feed/feed-actors.ts";
import {
  DEFAULT_FEED_CATEGORIES,
  FEED_CATEGORIES,
  categoryOfType,
  isFeedCategory,
} from "../../projections/event-feed/feed-categories.ts";
import type { FeedFilter } from "../../projections/event-feed/event-feed.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { parseRfc3339 } from "./rfc3339-time.ts";

/** How many values each list may hold: a page is then at most a few hundred index reads, whatever is asked. */
export const FEED_LIST_LIMITS = { category: FEED_CATEGORIES.length, entity: 10, type: 20, actor: 10 } as const;
export const MAX_FEED_LIMIT = 1000;
export const DEFAULT_FEED_LIMIT = 100;

const List = Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)));
const Position = (name: string) =>
  Schema.String.pipe(
    Schema.pattern(/^[0-9]{1,15}$/, { message: () => `${name} must be a position: a whole number in decimal digits` }),
  );

export const EventFeedQuery = Schema.Struct({
  category: List,
  entity: List,
  type: List,
  actor: List,
  since: Schema.optional(Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } })),
  until: Schema.optional(Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } })),
  after: Schema.optional(Position("after")),
  limit: Schema.optional(DecimalInteger(1, MAX_FEED_LIMIT)),
  next_token: Schema.optional(Position("next_token")),
});
export type EventFeedQuery = typeof EventFeedQuery.Type;

export const EVENT_FEED_DESCRIPTIONS = {
  category: `node, job, execution or workflow (default: node, job and execution); may repeat or be a comma list`,
  entity: `An entity's id (a node's, a job's, an execution's) in the categories asked for; at most ${FEED_LIST_LIMITS.entity}`,
  type: `Event type (NodeApproved, JobStopped, …); at most ${FEED_LIST_LIMITS.type}`,
  actor: `Who caused the event, type[:id]: operator:alice, node:n-1, system, workflow:jobs; at most ${FEED_LIST_LIMITS.actor}`,
  since: "Events at or after this time (RFC 3339 with an offset, like 2026-11-29T10:00:00Z)",
  until: "Events at or before this time (RFC 3339 with an offset)",
  after: "Events after this store position (exclusive)",
  limit: `Page size (default ${DEFAULT_FEED_LIMIT}); not with Accept: application/x-ndjson, which sends the whole selection`,
  next_token: "Cursor from the previous page's NextToken",
};

const fail = (field: string, problem: string) => badRequest(`query parameter ${field}: ${problem}`, { field });

/** The values of a repeatable parameter, each repetition possibly a comma list; distinct, in the order given. */
function listOf(
  field: keyof typeof FEED_LIST_LIMITS,
  raw: string | readonly string[] | undefined,
): string[] | undefined {
  if (raw === undefined) return undefined;
  const values = (typeof raw === "string" ? [raw] : raw).flatMap((v) => v.split(",")).map((v) => v.trim());
  if (values.some((v) => v === "")) throw fail(field, "an empty value (leave the parameter out to ask for all)");
  const distinct = [...new Set(values)];
  const max = FEED_LIST_LIMITS[field];
  if (distinct.length > max) throw fail(field, `at most ${max} values, got ${distinct.length}`);
  return distinct;
}

function actorOf(text: string): FeedActor {
  const colon = text.indexOf(":");
  const type = colon === -1 ? text : text.slice(0, colon);
  if (!(FEED_ACTOR_TYPES as readonly string[]).includes(type))
    throw fail("actor", `${JSON.stringify(text)} is not type[:id] with a type among ${FEED_ACTOR_TYPES.join(", ")}`);
  if (colon === -1) return { type: type as FeedActorType };
  const id = text.slice(colon + 1);
  if (id === "") throw fail("actor", `${JSON.stringify(text)} names no id after the colon (write ${type} for all)`);
  return { type: type as FeedActorType, id };
}

function timeOf(field: "since" | "until", text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseRfc3339(text);
  if (ms === undefined)
    throw fail(field, `${JSON.stringify(text)} is not an RFC 3339 time with an offset, like 2026-11-29T10:00:00Z`);
  // Stored times are whole milliseconds: the bounds become the whole milliseconds inside the window.
  return field === "since" ? Math.ceil(ms) : Math.floor(ms);
}

/** The filter a query asks for, or a 400 naming the first parameter that is wrong; nothing is read before. */
export function feedFilterOf(query: EventFeedQuery): FeedFilter {
  const categories = listOf("category", query.category);
  for (const c of categories ?? [])
    if (!isFeedCategory(c))
      throw fail("category", `unknown category ${JSON.stringify(c)}; the categories are ${FEED_CATEGORIES.join(", ")}`);
  const entities = listOf("entity", query.entity);
  for (const e of entities ?? []) if (e.length > 256) throw fail("entity", "an id is at most 256 characters");
  const types = listOf("type", query.type);
  for (const t of types ?? []) {
    const category = categoryOfType(t);
    if (category === undefined)
      throw fail("type", `unknown event type ${JSON.stringify(t)} (docs/events.md lists them)`);
    const asked = categories ?? DEFAULT_FEED_CATEGORIES;
    if (!asked.includes(category))
      throw fail(
        "type",
        `${t} is an event of category ${category}, which is not asked for (category: ${asked.join(", ")})`,
      );
  }
  const actors = listOf("actor", query.actor)?.map(actorOf);
  const since = timeOf("since", query.since);
  const until = timeOf("until", query.until);
  if (since !== undefined && until !== undefined && since > until)
    throw fail("since", `${query.since} is after until ${query.until}`);
  return {
    ...(categories === undefined ? {} : { categories }),
    ...(entities === undefined ? {} : { entities }),
    ...(types === undefined ? {} : { types }),
    ...(actors === undefined ? {} : { actors }),
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
  };
}

/** Where the answer starts: `after`, or the cursor a previous page gave (one of them at most). */
export function feedStartOf(query: EventFeedQuery): { readonly field: "after" | "next_token"; readonly after: number } {
  if (query.after !== undefined && query.next_token !== undefined)
    throw fail("after", "give after or next_token, not both (next_token already holds where to go on from)");
  if (query.next_token !== undefined) return { field: "next_token", after: Number(query.next_token) };
  return { field: "after", after: query.after === undefined ? 0 : Number(query.after) };
}
