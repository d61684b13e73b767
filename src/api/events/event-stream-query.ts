import { Schema } from "effect";
import { EventFeedQuery } from "./event-feed-query.ts";

// The stream has no pages: no limit, no next_token (Last-Event-ID is where a reconnection goes on from).
const { limit: _limit, next_token: _nextToken, ...fields } = EventFeedQuery.fields;

/** The event stream's query: the feed's filters, and where to start. */
export const EventStreamQuery = Schema.Struct(fields);
export type EventStreamQuery = typeof EventStreamQuery.Type;
