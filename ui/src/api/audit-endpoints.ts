import type { AuditDiffResponse } from "../../../src/api/audit/audit-diff-route.ts";
import type { ApiClient, Query } from "./client.ts";
import type { ClusterEvent, Page } from "./types.ts";

const ORCHESTRATOR = "/api/v1/orchestrator";

/** The cluster-wide feed (docs/audit.md, The feed): category, entity, type, actor, since, until, limit, next_token. */
export const readFeed = (client: ApiClient, query: Query) =>
  client.get<Page<ClusterEvent>>(`${ORCHESTRATOR}/events`, query);

export type AuditDiff = typeof AuditDiffResponse.Type;
export type AuditChange = AuditDiff["Nodes"][number];

/** What changed to nodes and jobs after `from` up to `to` (each an RFC 3339 time or a store position). */
export const auditDiff = (client: ApiClient, from: string, to: string) =>
  client.get<AuditDiff>(`${ORCHESTRATOR}/audit/diff`, { from, to });
