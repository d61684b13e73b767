import type { AuditDiffResponse } from "../../../src/api/audit/audit-diff-route.ts";
import type { AuditCheckpoint } from "../../../src/events/chain/checkpoint-signature.ts";
import type { LinkedFields } from "../../../src/events/chain/link-text.ts";
import type { ApiClient, Query } from "./client.ts";
import { ndjsonLines } from "./ndjson.ts";
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

const AUDIT = `${ORCHESTRATOR}/audit`;
/** Rows a request of the chain route (its largest page is 10,000). */
const CHAIN_PAGE = 5000;

/** Where the chain starts (the hash over the events stored before it) and the newest position. */
export interface ChainGenesisJson {
  readonly AfterPosition: number;
  readonly Link: string;
  readonly Head: number;
}

export const chainGenesis = (client: ApiClient) => client.get<ChainGenesisJson>(`${AUDIT}/genesis`);

/** A row of GET /audit/chain: the fields a link covers, and the stored link in hex (null: none). */
export type ChainRowJson = LinkedFields & { readonly link: string | null };

/** The stored rows after `after`, in store order, page after page until the log's end (NDJSON). */
export async function* chainRows(client: ApiClient, after: number, signal: AbortSignal): AsyncGenerator<ChainRowJson> {
  for (let cursor = after; ;) {
    const res = await client.stream(
      `${AUDIT}/chain`,
      { after: String(cursor), limit: String(CHAIN_PAGE) },
      "application/x-ndjson",
      signal,
    );
    let count = 0;
    for await (const line of ndjsonLines(res)) {
      const row = JSON.parse(line) as ChainRowJson;
      count++;
      cursor = row.position;
      yield row;
    }
    if (count < CHAIN_PAGE) return;
  }
}

/** Every checkpoint the orchestrator stored, page after page. */
export async function chainCheckpoints(client: ApiClient): Promise<AuditCheckpoint[]> {
  const out: AuditCheckpoint[] = [];
  for (let after = "0"; ;) {
    const page = await client.get<Page<AuditCheckpoint>>(`${AUDIT}/checkpoints`, { after });
    out.push(...page.Items);
    if (page.NextToken === "") return out;
    after = page.NextToken;
  }
}
