import type { ApiClient, Query } from "./client.ts";
import type { ClusterEvent, ListNodesResponse, NodeState, Whoami } from "./types.ts";

const ORCHESTRATOR = "/api/v1/orchestrator";
const nodePath = (id: string) => `${ORCHESTRATOR}/nodes/${encodeURIComponent(id)}`;

export const EVENT_STREAM_PATH = `${ORCHESTRATOR}/events/stream`;

export const whoami = (client: ApiClient) => client.get<Whoami>(`${ORCHESTRATOR}/whoami`);

/** The node list's query: Shoal's filters (filter-approval, filter-status, filter-cordoned, filter-drain, labels). */
export const listNodes = (client: ApiClient, query: Query) =>
  client.get<ListNodesResponse>(`${ORCHESTRATOR}/nodes`, query);

export const getNode = async (client: ApiClient, id: string) =>
  (await client.get<{ Node: NodeState }>(nodePath(id))).Node;

const HISTORY_PAGE = 100;
/** Past this many entries, a history shows the oldest and says so (the CLI lists them all). */
export const HISTORY_SHOWN = 1000;

/**
 * A history route's entries, oldest first, read page by page through the newest (the API pages from the oldest), up
 * to HISTORY_SHOWN; `complete` is false when there were more.
 */
export async function historyPages<T>(
  client: ApiClient,
  path: string,
): Promise<{ readonly items: readonly T[]; readonly complete: boolean }> {
  const items: T[] = [];
  let token: string | undefined;
  do {
    const page = await client.get<{ Items: readonly T[]; NextToken: string }>(path, {
      limit: String(HISTORY_PAGE),
      next_token: token,
    });
    items.push(...page.Items);
    token = page.NextToken === "" ? undefined : page.NextToken;
  } while (token !== undefined && items.length < HISTORY_SHOWN);
  return { items, complete: token === undefined };
}

/** A node's events, oldest first , up to HISTORY_SHOWN. */
export async function nodeHistory(client: ApiClient, id: string) {
  const { items, complete } = await historyPages<ClusterEvent>(client, `${nodePath(id)}/history`);
  return { events: items, complete };
}

export type NodeAction = "approve" | "reject" | "cordon" | "uncordon" | "drain" | "undrain" | "label";
/** Pre-authorisation names a node that need not exist yet (its exact id): not an action on a listed node. */
export type PreauthorizationAction = "preauthorize" | "revoke-preauthorization";

/** An operator action on a node (docs/nodes.md); Message is the reason the history records. */
export const updateNode = (
  client: ApiClient,
  id: string,
  body: {
    readonly Action: NodeAction | PreauthorizationAction;
    readonly Message?: string;
    readonly PublicKey?: string;
    readonly Deadline?: string;
    readonly Labels?: Readonly<Record<string, string>>;
    readonly RemoveLabels?: readonly string[];
    readonly ResetLabels?: readonly string[];
  },
) => client.put<{ Success: boolean; Message?: string }>(nodePath(id), { NodeID: id, ...body });
