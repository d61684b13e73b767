import { useCallback, useEffect, useState } from "preact/hooks";
import { readFeed } from "../api/audit-endpoints.ts";
import type { ClusterEvent, Page } from "../api/types.ts";
import { ErrorAlert, Time, actorName, errorText } from "../common/format.tsx";
import { Pager, usePageTokens } from "../common/pager.tsx";
import { useSession } from "../session/session.tsx";
import { useUrlFilters } from "../common/url-filters.ts";
import { isoToLocal, localToIso } from "./moment.ts";
import { DataTable } from "../common/data-table.tsx";

const PAGE_SIZE = 50;

interface FeedFilters {
  readonly category: string;
  readonly entity: string;
  readonly type: string;
  readonly actor: string;
  readonly since: string;
  readonly until: string;
}

const NO_FILTERS: FeedFilters = { category: "", entity: "", type: "", actor: "", since: "", until: "" };

const TEXT_FILTERS: readonly (readonly [keyof FeedFilters, string, string])[] = [
  ["entity", "Entity", "n-1, j-…"],
  ["type", "Event type", "NodeApproved, JobStopped"],
  ["actor", "Actor", "operator:alice, workflow"],
];

const TIME_FILTERS: readonly (readonly [keyof FeedFilters, string])[] = [
  ["since", "Since"],
  ["until", "Until"],
];

/** The API's query: the times as RFC 3339 instants (the inputs hold the reader's local time). */
const queryOf = (f: FeedFilters): FeedFilters => ({ ...f, since: localToIso(f.since), until: localToIso(f.until) });
/** The inputs' values for the API's query. */
const draftOf = (f: FeedFilters): FeedFilters => ({ ...f, since: isoToLocal(f.since), until: isoToLocal(f.until) });

/**
 * The cluster-wide record of events, oldest first, a page at a time, with the feed's filters (comma lists take any
 * of their values). Applied on Enter or Apply, and kept in the address (the times as RFC 3339 instants), so that a
 * link or a reload shows the same selection.
 */
export function AuditFeed() {
  const session = useSession();
  const [filters, setFilters] = useUrlFilters(NO_FILTERS);
  const [draft, setDraft] = useState<FeedFilters>(() => draftOf(filters));
  useEffect(() => setDraft(draftOf(filters)), [filters]);
  const pages = usePageTokens();
  const [page, setPage] = useState<Page<ClusterEvent> | undefined>();
  const [error, setError] = useState<string | undefined>();

  const load = useCallback(async () => {
    try {
      setPage(await readFeed(session.client, { ...filters, limit: String(PAGE_SIZE), next_token: pages.token }));
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  }, [session, filters, pages.token]);
  useEffect(() => void load(), [load]);

  const set = (name: keyof FeedFilters, value: string) => setDraft({ ...draft, [name]: value });
  return (
    <section aria-labelledby="feed-title">
      <h2 id="feed-title">Events</h2>
      <form
        class="filters"
        aria-label="Filter events"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(queryOf(draft));
          pages.first();
        }}
      >
        <label>
          Category
          <select value={draft.category} onChange={(e) => set("category", e.currentTarget.value)}>
            <option value="">Nodes, jobs, executions</option>
            <option value="node">Nodes</option>
            <option value="job">Jobs</option>
            <option value="execution">Executions</option>
            <option value="workflow">Workflows</option>
          </select>
        </label>
        {TEXT_FILTERS.map(([name, label, placeholder]) => (
          <label key={name}>
            {label}
            <input value={draft[name]} placeholder={placeholder} onInput={(e) => set(name, e.currentTarget.value)} />
          </label>
        ))}
        {TIME_FILTERS.map(([name, label]) => (
          <label key={name}>
            {label}
            <input
              type="datetime-local"
              step={1}
              value={draft[name]}
              onInput={(e) => set(name, e.currentTarget.value)}
            />
          </label>
        ))}
        <button type="submit" class="secondary">
          Apply
        </button>
      </form>
      <ErrorAlert message={error} />
      {page === undefined ? null : (
        <>
          <DataTable
            caption="Events"
            class="events"
            columns={["Position", "Time", "Entity", "Event", "By", "Reason"]}
            items={page.Items}
            empty="No event matches."
            row={(event) => (
              <tr key={event.id}>
                <td>{event.position}</td>
                <td>
                  <Time at={event.time} />
                </td>
                <td>
                  <code>{event.stream}</code>
                </td>
                <th scope="row">{event.type}</th>
                <td>{actorName(event.metadata.actor)}</td>
                <td>{event.metadata.reason ?? ""}</td>
              </tr>
            )}
          />
          <Pager pages={pages} nextToken={page.NextToken} />
        </>
      )}
    </section>
  );
}
