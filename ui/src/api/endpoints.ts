import type { ApiClient, Query } from "./client.ts";
import type { HistoryResponse, ListNodesResponse, NodeState, Whoami } from "./types.ts";

const ORCHESTRATOR = "/api/v1/orchestrator";
const nodePath = (id: string) => `${ORCHESTRATOR}/nodes/${encodeURIComponent(id)}`;

export const EVENT_STREAM_PATH = `${ORCHESTRATOR}/events/stream`;

export const whoami = (client: ApiClient) => client.get<Whoami>(`${ORCHESTRATOR}/whoami`);

/** The node list's query: Shoal's filters (filter-approval, filter-status, filter-cordoned, filter-drain, labels). */
export const listNodes = (client: ApiClient, query: Query) =>
  client.get<ListNodesResponse>(`${ORCHESTRATOR}/nodes`, query);

export const getNode = async (client: ApiClient, id: string) =>
  (await client.get<{ Node: NodeState }>(nodePath(id))).Node;

export const nodeHistory = (client: ApiClient, id: string, nextToken?: string) =>
  client.get<HistoryResponse>(`${nodePath(id)}/history`, { limit: "100", next_token: nextToken });

export type NodeAction = "approve" | "reject" | "cordon" | "uncordon" | "drain" | "undrain";

/** An operator action on a node; Message is the reason the history records. */
export const updateNode = (
  client: ApiClient,
  id: string,
  body: { readonly Action: NodeAction; readonly Message?: string; readonly Deadline?: string },
) => client.put<{ Success: boolean; Message?: string }>(nodePath(id), { NodeID: id, ...body });
