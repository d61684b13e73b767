import { Readable } from "node:stream";
import { Schema } from "effect";
import type { FastifyRequest } from "fastify";
import { badRequest } from "../../errors/shoal-error.ts";
import type { RecordedEvent } from "../../events/store/event-store.ts";
import { toClusterEvent } from "../../projections/cluster-event.ts";
import type { EventFeed } from "../../projections/event-feed/event-feed.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import { ClusterEventJson } from "./cluster-event-json.ts";
import {
  DEFAULT_FEED_LIMIT,
  EVENT_FEED_DESCRIPTIONS,
  EventFeedQuery,
  feedFilterOf,
  feedStartOf,
} from "./event-feed-query.ts";

export const EVENT_FEED_PATH = "/api/v1/orchestrator/events";
const NDJSON = "application/x-ndjson";

export const EventFeedResponse = Schema.Struct({ Items: Schema.Array(ClusterEventJson), NextToken: Schema.String });

/** Whether the caller asked for NDJSON (`Accept: application/x-ndjson`, among others or alone). */
function wantsNdjson(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (accept === undefined) return false;
  return accept.split(",").some((part) => part.split(";")[0]?.trim().toLowerCase() === NDJSON);
}

const line = (e: RecordedEvent): string => `${JSON.stringify(toClusterEvent(e))}\n`;

/**
 * `GET /api/v1/orchestrator/events`: every stored event of the cluster, filtered, in store order (docs/audit.md, The
 * feed). A page with a cursor, or with `Accept: application/x-ndjson` the whole selection, one event a line.
 */
export function eventFeedRoutes(feed: EventFeed): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: EVENT_FEED_PATH,
      operationId: "eventFeed",
      tags: ["Events", "Audit"],
      summary: "Returns the cluster's history, filtered.",
      capability: "read:history",
      description:
        "Every stored event of every node, job and execution (and, when asked for, the workflows' records), in store order, filtered: the filters given must all hold, and a filter with several values takes any of them. Pages are cursored by store position. With `Accept: application/x-ndjson`, the whole selection up to the newest event when the request arrived, one ClusterEvent a line.",
      query: EventFeedQuery,
      describe: EVENT_FEED_DESCRIPTIONS,
      responses: {
        "200": {
          description: "A page of events, oldest first; NextToken is empty at the end of the selection",
          schema: EventFeedResponse,
          variants: { [NDJSON]: ClusterEventJson },
        },
      },
      errors: ["BadRequest", "Unavailable"],
      handler: async ({ query }, request, reply) => {
        const filter = feedFilterOf(query);
        const start = feedStartOf(query);
        const ndjson = wantsNdjson(request);
        if (ndjson && query.limit !== undefined)
          throw badRequest(
            "query parameter limit: NDJSON sends the whole selection; leave limit out, or ask for JSON pages",
            { field: "limit" },
          );
        const head = await feed.head();
        if (start.after > head)
          throw badRequest(
            `query parameter ${start.field}: position ${start.after} is beyond the newest event (${head})`,
            { field: start.field },
          );
        if (!ndjson) {
          const page = await feed.page(filter, start.after, query.limit ?? DEFAULT_FEED_LIMIT);
          return { Items: page.items, NextToken: page.next === undefined ? "" : String(page.next) };
        }
        const pages = feed.export(filter, start.after);
        // The first page is read before the status is sent: a store that cannot answer is a 503, not a cut stream.
        const first = await pages.next();
        async function* lines(): AsyncGenerator<string> {
          try {
            if (first.done) return;
            yield first.value.map(line).join("");
            for await (const page of pages) yield page.map(line).join("");
          } catch (err) {
            // The status is sent: the stream is cut short, which an NDJSON reader sees as an incomplete answer.
            request.log.warn({ err }, "event feed export failed");
            throw err;
          } finally {
            await pages.return(undefined);
          }
        }
        reply.header("content-type", `${NDJSON}; charset=utf-8`);
        return reply.send(Readable.from(lines(), { objectMode: false }));
      },
    }),
  ];
}
