import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { getJob, jobExecutions, jobHistory } from "../api/job-endpoints.ts";
import type { Execution, Job } from "../api/types.ts";
import { ErrorAlert, errorText } from "../common/format.tsx";
import { LiveStatus, useLiveRefresh } from "../live/use-live-refresh.tsx";
import { useSession } from "../session/session.tsx";
import { JobExecutions } from "./job-executions.tsx";
import { JobStateBadge, isTerminal } from "./job-format.tsx";
import { isJobEvent, JOB_LIVE_FILTER } from "./job-events.ts";
import { JobHistory } from "./job-history.tsx";
import { JobLogs } from "./job-logs.tsx";
import { JobSpecSummary } from "./job-spec-summary.tsx";
import { StopJob } from "./stop-job.tsx";

/**
 * The job's state message. A queued job's says why: the scheduler's reasons per node ("not enough nodes to run
 * job… • Node n-1: …"), one line each.
 */
function StateMessage(props: { readonly job: Job }) {
  const { StateType, Message } = props.job.State;
  if (Message === "") return null;
  const [first, ...reasons] = Message.split("\n");
  return (
    <section aria-labelledby="state-title" class={StateType === "Queued" ? "why-queued" : undefined}>
      <h2 id="state-title">{StateType === "Queued" ? "Why it is queued" : "State message"}</h2>
      <p>{first}</p>
      {reasons.length === 0 ? null : (
        <ul>
          {reasons.map((reason, i) => (
            <li key={i}>{reason.replace(/^• /, "")}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** One job: its spec, state and why, executions, history (who, why, when), logs, and stopping it. */
export function JobPage(props: { readonly id: string }) {
  const session = useSession();
  const [job, setJob] = useState<Job | undefined>();
  const [executions, setExecutions] = useState<readonly Execution[]>([]);
  const [history, setHistory] = useState<Awaited<ReturnType<typeof jobHistory>> | undefined>();
  const [error, setError] = useState<string | undefined>();

  const load = useCallback(async () => {
    try {
      const [state, execs, entries] = await Promise.all([
        getJob(session.client, props.id),
        jobExecutions(session.client, props.id),
        jobHistory(session.client, props.id),
      ]);
      setJob(state);
      setExecutions(execs.Items);
      setHistory(entries);
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  }, [session, props.id]);

  useEffect(() => void load(), [load]);
  const latest = executions[executions.length - 1]?.ID ?? "";
  const executionIds = useMemo(() => new Set(executions.map((e) => e.ID)), [executions]);
  const mode = useLiveRefresh(
    session,
    JOB_LIVE_FILTER,
    () => void load(),
    (event) => isJobEvent(props.id, executionIds, event),
  );

  return (
    <main>
      <p class="crumbs">
        <a href="/ui/jobs">Jobs</a> /
      </p>
      <h1>{job?.Name && job.Name !== props.id ? `${job.Name} (${props.id})` : props.id}</h1>
      <LiveStatus mode={mode} failed={error !== undefined} />
      <ErrorAlert message={error} />
      {job === undefined ? (
        error === undefined ? (
          <p class="loading">Loading…</p>
        ) : null
      ) : (
        <>
          <JobStateBadge job={job} />
          {isTerminal(job) ? null : <StopJob jobId={job.ID} onDone={() => void load()} />}
          <StateMessage job={job} />
          <div class="columns">
            <section aria-labelledby="spec-title">
              <h2 id="spec-title">Job</h2>
              <JobSpecSummary job={job} />
            </section>
            <JobLogs jobId={job.ID} execution={latest} running={!isTerminal(job)} />
          </div>
          <JobExecutions executions={executions} />
          {history === undefined ? null : <JobHistory entries={history.items} complete={history.complete} />}
        </>
      )}
    </main>
  );
}
