import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { ApiError } from "../api/client.ts";
import { listNodes } from "../api/endpoints.ts";
import type { NodeState } from "../api/types.ts";
import { Labels, Time } from "../common/format.tsx";
import { PagedRows } from "../common/paged-rows.ts";
import { useUrlFilters } from "../common/url-filters.ts";
import { VirtualTable } from "../common/virtual-table.tsx";
import { coalescedRefresh } from "../live/coalesced-refresh.ts";
import { LiveStatus, useLiveRefresh } from "../live/use-live-refresh.tsx";
import { useSession } from "../session/session.tsx";
import { NodeActions } from "./node-actions.tsx";
import { NodeBadges } from "./node-badges.tsx";
import { NO_FILTERS, NodeFiltersForm } from "./node-filters.tsx";

const QUEUE_SIZE = 100;

/** The nodes waiting for an operator: approve or reject each, with a reason. */
function PendingQueue(props: { readonly pending: readonly NodeState[]; readonly onDone: () => void }) {
  if (props.pending.length === 0) return null;
  return (
    <section class="pending" aria-labelledby="pending-title">
      <h2 id="pending-title">Waiting for approval ({props.pending.length})</h2>
      <ul>
        {props.pending.map((node) => (
          <li key={node.Info.NodeID}>
            <a href={`/ui/nodes/${encodeURIComponent(node.Info.NodeID)}`}>{node.Info.NodeID}</a>{" "}
            <span class="muted">{node.Info.Hostname}</span> <Labels labels={node.Info.Labels} />
            <NodeActions node={node} onDone={props.onDone} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The rows read at a time, as the reader scrolls; see docs/console.md (Nodes) for why 100. */
const PAGE_SIZE = 100;
/** Rows left below the window when the next page is read: it is there before the reader gets to it. */
const READ_AHEAD = 50;
const COLUMNS = ["Node", "Type", "State", "Labels", "Running", "Last heartbeat"];

const errorText = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

function NodeCells(props: { readonly node: NodeState }) {
  const { node } = props;
  const labels = Object.entries(node.Info.Labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  return (
    <>
      <th scope="row">
        <a href={`/ui/nodes/${encodeURIComponent(node.Info.NodeID)}`}>{node.Info.NodeID}</a>
      </th>
      <td>{node.Info.NodeType}</td>
      <td>
        <NodeBadges node={node} />
      </td>
      <td title={labels}>
        <Labels labels={node.Info.Labels} />
      </td>
      <td>{node.Info.ComputeNodeInfo?.RunningExecutions ?? "—"}</td>
      <td>
        <Time at={node.ConnectionState.LastHeartbeat} />
      </td>
    </>
  );
}

/**
 * Every node, read a page at a time through the API's NextToken as the reader scrolls (the console never asks for
 * the whole fleet at once), drawn a window at a time (VirtualTable), with Shoal's filters kept in the URL, and the
 * approval queue above it. Kept current from the event stream: a burst of events is one re-read of the pages on
 * screen (coalescedRefresh), the rows off screen re-read when they are shown again.
 */
export function NodesPage() {
  const session = useSession();
  const [filters, setFilters] = useUrlFilters(NO_FILTERS);
  const [, redraw] = useState(0);
  const rows = useMemo(
    () =>
      new PagedRows<NodeState>(
        async (start, limit) => {
          const page = await listNodes(session.client, { ...filters, limit: String(limit), next_token: start });
          return { items: page.Nodes, next: page.NextToken };
        },
        PAGE_SIZE,
        () => redraw((n) => n + 1),
      ),
    [session, filters],
  );
  const [pending, setPending] = useState<readonly NodeState[]>([]);
  const [queueError, setQueueError] = useState<string | undefined>();

  const loadQueue = useCallback(async () => {
    try {
      setPending((await listNodes(session.client, { "filter-approval": "PENDING", limit: String(QUEUE_SIZE) })).Nodes);
      setQueueError(undefined);
    } catch (e) {
      setQueueError(errorText(e));
    }
  }, [session]);

  useEffect(() => {
    void rows.loadMore();
    return () => rows.stop();
  }, [rows]);
  useEffect(() => void loadQueue(), [loadQueue]);
  const mode = useLiveRefresh(session, "category=node", () => Promise.all([rows.refresh(), loadQueue()]));

  // Rows scrolled back into view after a refresh are re-read, paced like the live updates.
  const staleReads = useMemo(() => coalescedRefresh(() => rows.refreshShown()), [rows]);
  useEffect(() => () => staleReads.stop(), [staleReads]);
  const onWindow = useCallback(
    (first: number, last: number) => {
      rows.show(first, last);
      if (rows.staleShown) staleReads.request();
      // Again after each page: one may come back empty (a label selector's, cut at the API's scan budget).
      const readAhead = (): unknown =>
        !rows.complete && rows.error === undefined && last + READ_AHEAD >= rows.items.length
          ? rows.loadMore().then(readAhead)
          : undefined;
      void readAhead();
    },
    [rows, staleReads],
  );

  const error = rows.error === undefined ? queueError : errorText(rows.error);
  const count = rows.items.length;
  return (
    <main>
      <h1>Nodes</h1>
      <LiveStatus mode={mode} failed={rows.error !== undefined} />
      <PendingQueue pending={pending} onDone={() => void Promise.all([rows.refresh(), loadQueue()])} />
      <NodeFiltersForm key={filters.labels} filters={filters} onChange={setFilters} />
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <VirtualTable
        key={JSON.stringify(filters)}
        caption="Nodes"
        class="nodes"
        columns={COLUMNS}
        items={rows.items}
        complete={rows.complete}
        stale={rows.error !== undefined}
        empty={rows.loaded ? "No node matches." : rows.error === undefined ? "Loading…" : "Not read."}
        itemKey={(node) => node.Info.NodeID}
        cells={(node) => <NodeCells node={node} />}
        onWindow={onWindow}
      />
      <p class="list-count">
        {rows.complete
          ? `${count.toLocaleString()} ${count === 1 ? "node" : "nodes"}.`
          : `${count.toLocaleString()} nodes read so far; more are read as you scroll.`}{" "}
        {rows.complete || !rows.loaded ? null : (
          // Never disabled: a reader who tabbed to it while a page is read keeps the focus here.
          <button type="button" class="secondary" aria-busy={rows.loading} onClick={() => void rows.loadMore()}>
            {rows.loading ? "Reading…" : `Read ${PAGE_SIZE} more`}
          </button>
        )}
      </p>
    </main>
  );
}
