import { readFeed } from "../api/audit-endpoints.ts";
import type { ApiClient, Query } from "../api/client.ts";
import type { ClusterEvent } from "../api/types.ts";
import {
  batches,
  JOINED_TYPE,
  outstandingPreauthorizations,
  PREAUTHORIZATION_TYPES,
  type Preauthorization,
} from "./preauthorizations.ts";

/** The feed's largest page, and the most entities one request may name (docs/audit.md, The feed). */
const FEED_PAGE = 1000;
const FEED_ENTITIES = 10;

/** Every event of the feed that matches `query`, page after page. */
async function wholeFeed(client: ApiClient, query: Query): Promise<ClusterEvent[]> {
  const events: ClusterEvent[] = [];
  let token: string | undefined;
  do {
    const page = await readFeed(client, { ...query, category: "node", limit: String(FEED_PAGE), next_token: token });
    events.push(...page.Items);
    token = page.NextToken === "" ? undefined : page.NextToken;
  } while (token !== undefined);
  return events;
}

/**
 * The node ids pre-authorised and not joined yet. The API lists no pre-authorisations: they are read from the feed
 * (needs read:history), first the pre-authorisations, revokes and deletes, then, for the ids still open, whether
 * the node has registered since (a node's registration is asked for by id, so a large fleet's are not all read).
 */
export async function readPreauthorizations(client: ApiClient): Promise<Preauthorization[]> {
  const events = await wholeFeed(client, { type: PREAUTHORIZATION_TYPES.join(",") });
  const open = outstandingPreauthorizations(events);
  for (const ids of batches(
    open.map((p) => p.nodeId),
    FEED_ENTITIES,
  ))
    events.push(...(await wholeFeed(client, { type: JOINED_TYPE, entity: ids.join(",") })));
  return outstandingPreauthorizations(events);
}
