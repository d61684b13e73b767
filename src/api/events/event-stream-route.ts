import type { Logger } from "pino";
import type { Clock } from "../../actors/clock.ts";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import { badRequest, unavailable } from "../../errors/shoal-error.ts";
import type { EventStore } from "../../events/store/event-store.ts";
import { storeFilterOf } from "../../projections/event-feed/event-feed.ts";
import type { EventStreamHub } from "../../projections/event-stream/event-stream-hub.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import { ClusterEventJson } from "./cluster-event-json.ts";
import { EVENT_FEED_DESCRIPTIONS, feedFilterOf } from "./event-feed-query.ts";
import { EventStreamClient } from "./event-stream-client.ts";
import { EventStreamQuery } from "./event-stream-query.ts";

export const EVENT_STREAM_PATH = "/api/v1/orchestrator/events/stream";
const POSITION = /^[0-9]{1,15}$/;

export interface EventStreamDeps {
  readonly hub: EventStreamHub;
  readonly store: EventStore;
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly clientBufferBytes: number;
  readonly maxClients: number;
  readonly onCutOff?: () => void;
}

/** Where the stream starts: the Last-Event-ID a reconnecting client sends, else `after`, else the newest event. */
function startOf(header: string | string[] | undefined, after: string | undefined, hub: EventStreamHub) {
  if (header !== undefined) {
    const value = Array.isArray(header) ? header.at(-1)! : header;
    if (!POSITION.test(value.trim()))
      throw badRequest(`header Last-Event-ID: ${JSON.stringify(value)} is not a position (the id of an event)`, {
        field: "Last-Event-ID",
      });
    return { field: "Last-Event-ID", after: Number(value.trim()) };
  }
  if (after !== undefined) return { field: "after", after: Number(after) };
  return { field: undefined, after: hub.head };
}

/**
 * `GET /api/v1/orchestrator/events/stream`: the feed as Server-Sent Events (docs/audit.md, The event stream): every
 * stored event the filters select after the start, then each new one as it is stored, each with its position as its
 * id, so a client that reconnects with Last-Event-ID misses nothing and sees nothing twice.
 */
export function eventStreamRoute(deps: EventStreamDeps): AnyRoute {
  let nextClient = 0;
  return defineRoute({
    method: "GET",
    path: EVENT_STREAM_PATH,
    operationId: "eventStream",
    tags: ["Events"],
    summary: "Streams the cluster's events as Server-Sent Events.",
    capability: "read:history",
    description:
      "The feed's events as Server-Sent Events, stored ones first, then each new one as it is stored. Each message has the event's store position as its `id` and the feed's ClusterEvent JSON as its one `data` line, with no event name (an EventSource's `onmessage` receives them). It starts after `Last-Event-ID` (what a reconnecting EventSource sends), else after `after`, else at the newest event. A `: keep-alive` comment comes when nothing was sent for a while. A client whose connection holds more than its buffer allows, or that the orchestrator sends away when it stops, gets a last message named `resume` with `{\"after\": N, \"reason\": …}` (and N as its id): reconnect with Last-Event-ID N.",
    query: EventStreamQuery,
    describe: { ...EVENT_FEED_DESCRIPTIONS, after: "Start after this store position (exclusive); Last-Event-ID wins" },
    headers: [
      {
        name: "Last-Event-ID",
        description: "Start after this store position: the id of the last message received (wins over after)",
      },
    ],
    responses: {
      "200": {
        description: "An endless text/event-stream; each message's data is one ClusterEvent",
        schema: ClusterEventJson,
        contentType: "text/event-stream",
      },
    },
    errors: ["BadRequest", "Unavailable"],
    handler: async ({ query }, request, reply) => {
      const filter = storeFilterOf(feedFilterOf(query));
      const start = startOf(request.headers["last-event-id"], query.after, deps.hub);
      if (start.field !== undefined) {
        const head = await deps.store.headPosition();
        if (start.after > head)
          throw badRequest(
            `${start.field === "after" ? "query parameter after" : "header Last-Event-ID"}: position ${start.after} is beyond the newest event (${head})`,
            {
              field: start.field,
            },
          );
      }
      if (deps.hub.clients >= deps.maxClients)
        throw unavailable(`the event stream serves ${deps.maxClients} clients already (API.EventStream.MaxClients)`, 5);
      if (request.method === "HEAD")
        return reply
          .header("content-type", "text/event-stream; charset=utf-8")
          .header("cache-control", "no-cache")
          .send();
      reply.hijack();
      const socket = reply.raw.socket;
      // Gone before it was answered: nothing to stream to.
      if (socket === null || socket.destroyed) return reply;
      const id = nextClient++;
      new EventStreamClient(socket, filter, JSON.stringify(filter), start.after, {
        id,
        hub: deps.hub,
        store: deps.store,
        deadlines: deps.deadlines,
        clock: deps.clock,
        logger: request.log as Logger,
        clientBufferBytes: deps.clientBufferBytes,
        ...(deps.onCutOff ? { onCutOff: deps.onCutOff } : {}),
      }).start();
      return reply;
    },
  });
}
