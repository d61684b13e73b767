import { useCallback, useEffect, useState } from "preact/hooks";
import { listJobs } from "../api/job-endpoints.ts";
import type { Job, Page } from "../api/types.ts";
import { ErrorAlert, Labels, Time, errorText } from "../common/format.tsx";
import { Pager, usePageTokens } from "../common/pager.tsx";
import { LiveStatus, useLiveRefresh } from "../live/use-live-refresh.tsx";
import { useSession } from "../session/session.tsx";
import { DEFAULT_JOB_FILTERS, JobFiltersForm, type JobFilters } from "./job-filters.tsx";
import { JobStateBadge, nanosToIso } from "./job-format.tsx";
import { DataTable } from "../common/data-table.tsx";
import { useUrlFilters } from "../common/url-filters.ts";

const PAGE_SIZE = 50;

export const jobHref = (id: string) => `/ui/jobs/${encodeURIComponent(id)}`;

/**
 * Every job, a page at a time (the API's NextToken; never the whole list), newest first by default, with the API's
 * filters, kept in the address (a link or a reload shows the same selection). Kept current from the event stream.
 */
export function JobsPage() {
  const session = useSession();
  const [filters, setFilters] = useUrlFilters<JobFilters>(DEFAULT_JOB_FILTERS);
  const pages = usePageTokens();
  const [page, setPage] = useState<Page<Job> | undefined>();
  const [error, setError] = useState<string | undefined>();

  const load = useCallback(async () => {
    try {
      setPage(await listJobs(session.client, { ...filters, limit: String(PAGE_SIZE), next_token: pages.token }));
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  }, [session, filters, pages.token]);

  useEffect(() => void load(), [load]);
  const mode = useLiveRefresh(session, "category=job", () => void load());

  return (
    <main>
      <h1>Jobs</h1>
      <LiveStatus mode={mode} failed={error !== undefined} />
      {session.can("write:job") ? (
        <p>
          <a class="button" href="/ui/jobs/new">
            Submit a job
          </a>
        </p>
      ) : null}
      <JobFiltersForm
        key={JSON.stringify(filters)}
        filters={filters}
        onChange={(next) => {
          setFilters(next);
          pages.first();
        }}
      />
      <ErrorAlert message={error} />
      {page === undefined ? (
        error === undefined ? (
          <p class="loading">Loading…</p>
        ) : null
      ) : (
        <>
          <DataTable
            caption="Jobs"
            class="jobs"
            columns={["Job", "Name", "Type", "State", "Namespace", "Labels", "Created"]}
            items={page.Items}
            empty="No job matches."
            row={(job) => (
              <tr key={job.ID}>
                <th scope="row">
                  <a href={jobHref(job.ID)}>{job.ID}</a>
                </th>
                <td>{job.Name}</td>
                <td>{job.Type}</td>
                <td>
                  <JobStateBadge job={job} />
                </td>
                <td>{job.Namespace}</td>
                <td>
                  <Labels labels={job.Labels} />
                </td>
                <td>
                  <Time at={nanosToIso(job.CreateTime)} />
                </td>
              </tr>
            )}
          />
          <Pager pages={pages} nextToken={page.NextToken} />
        </>
      )}
    </main>
  );
}
