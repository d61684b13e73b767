import { notFound } from "../../errors/shoal-error.ts";
import type { JobViews } from "../../projections/jobs/job-views.ts";
import type { NodeLogReader } from "../../transport/node-log-client.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import { resolveJobVersion } from "./job-lookup.ts";

/** Which of a job's results: Bacalhau's namespace, job_version and all_job_versions. */
export interface ResultsQuery {
  readonly namespace?: string | undefined;
  readonly job_version?: number | undefined;
  readonly all_job_versions?: boolean | undefined;
}

/** An execution that completed with a published result. */
export type PublishedExecution = ExecutionState & {
  readonly publishedResult: NonNullable<ExecutionState["publishedResult"]>;
};

const published = (e: ExecutionState): e is PublishedExecution =>
  e.computeState === "Completed" && e.publishedResult !== undefined;

/**
 * A job's published results (docs/jobs.md, Results): its completed executions' results, each
 * read from the node that published it, through the log protocol's reads (same subjects, same
 * permissions), chunk by chunk as the caller takes them.
 */
export class JobResults {
  constructor(
    private readonly views: JobViews,
    private readonly nodes: NodeLogReader,
  ) {}

  /**
   * The job's id and its executions with a published result, oldest first: those of the version asked for (0 or
   * absent: the current one, as Bacalhau's GetResults), or of every version.
   */
  list(
    idOrName: string,
    query: ResultsQuery = {},
  ): { readonly jobId: string; readonly executions: PublishedExecution[] } {
    const { job, at } = resolveJobVersion(this.views, idOrName, query.namespace, query.job_version ?? 0);
    const executions = this.views
      .executionsOfJob(job.jobId)
      .filter((e) => published(e) && (query.all_job_versions === true || e.jobVersion === at.version))
      .sort((a, b) => a.createTime - b.createTime);
    return { jobId: job.jobId, executions: executions as PublishedExecution[] };
  }

  /** One of the job's executions with a published result, of any version; NotFound for any other. */
  execution(idOrName: string, executionId: string, namespace?: string): PublishedExecution {
    const { jobId, executions } = this.list(idOrName, { namespace, all_job_versions: true });
    const found = executions.find((e) => e.executionId === executionId);
    if (found === undefined) throw notFound(`execution ${executionId} of job ${jobId} has no published result`);
    return found;
  }

  /** The result's bytes from its node: NotFound when the node no longer has it, Unavailable when it does not answer. */
  async *read(execution: PublishedExecution, signal: AbortSignal): AsyncGenerator<Uint8Array> {
    for await (const chunk of this.nodes.read(execution.nodeId, execution.executionId, {
      follow: false,
      result: true,
      signal,
    }))
      yield chunk.data;
  }
}
