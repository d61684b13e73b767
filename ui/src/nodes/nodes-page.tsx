import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "../api/client.ts";
import { listNodes } from "../api/endpoints.ts";
import type { NodeState } from "../api/types.ts";
import { Labels, Time } from "../common/format.tsx";
import { Pager, usePageTokens } from "../common/pager.tsx";
import { LiveStatus, useLiveRefresh } from "../live/use-live-refresh.tsx";
import { useSession } from "../session/session.tsx";
import { NodeActions } from "./node-actions.tsx";
import { NodeBadges } from "./node-badges.tsx";
import { NO_FILTERS, NodeFiltersForm, type NodeFilters } from "./node-filters.tsx";
import { DataTable } from "../common/data-table.tsx";

const PAGE_SIZE = 50;
const QUEUE_SIZE = 100;

interface Page {
  readonly nodes: readonly NodeState[];
  readonly next: string;
}

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

/**
 * Every node, a page at a time (the API's NextToken; the list never loads the whole fleet), with Shoal's filters,
 * and the approval queue above it. Kept current from the event stream.
 */
export function NodesPage() {
  const session = useSession();
  const [filters, setFilters] = useState<NodeFilters>(NO_FILTERS);
  const pages = usePageTokens();
  const [page, setPage] = useState<Page | undefined>();
  const [pending, setPending] = useState<readonly NodeState[]>([]);
  const [error, setError] = useState<string | undefined>();
  const token = pages.token;

  const load = useCallback(async () => {
    try {
      const [list, queue] = await Promise.all([
        listNodes(session.client, { ...filters, limit: String(PAGE_SIZE), next_token: token }),
        listNodes(session.client, { "filter-approval": "PENDING", limit: String(QUEUE_SIZE) }),
      ]);
      setPage({ nodes: list.Nodes, next: list.NextToken });
      setPending(queue.Nodes);
      setError(undefined);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    }
  }, [session, filters, token]);

  useEffect(() => void load(), [load]);
  const mode = useLiveRefresh(session, "category=node", () => void load());

  const changeFilters = (next: NodeFilters) => {
    setFilters(next);
    pages.first();
  };

  return (
    <main>
      <h1>Nodes</h1>
      <LiveStatus mode={mode} />
      <PendingQueue pending={pending} onDone={() => void load()} />
      <NodeFiltersForm filters={filters} onChange={changeFilters} />
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {page === undefined ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          <DataTable
            caption="Nodes"
            class="nodes"
            columns={["Node", "Type", "State", "Labels", "Running", "Last heartbeat"]}
            items={page.nodes}
            empty="No node matches."
            row={(node) => (
              <tr key={node.Info.NodeID}>
                <th scope="row">
                  <a href={`/ui/nodes/${encodeURIComponent(node.Info.NodeID)}`}>{node.Info.NodeID}</a>
                </th>
                <td>{node.Info.NodeType}</td>
                <td>
                  <NodeBadges node={node} />
                </td>
                <td>
                  <Labels labels={node.Info.Labels} />
                </td>
                <td>{node.Info.ComputeNodeInfo?.RunningExecutions ?? "—"}</td>
                <td>
                  <Time at={node.ConnectionState.LastHeartbeat} />
                </td>
              </tr>
            )}
          />
          <Pager pages={pages} nextToken={page.next} />
        </>
      )}
    </main>
  );
}
