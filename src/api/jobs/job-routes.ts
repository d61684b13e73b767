import { JSONSchema, Schema } from "effect";
import { commandContext, type CommandContext } from "../../actors/command-context.ts";
import type { JobControl } from "../../actors/job-control.ts";
import type { CommandOutcome } from "../../cluster/owned-command.ts";
import { badRequest } from "../../errors/shoal-error.ts";
import { SubmittedJob as SubmittedJobSchema } from "../../events/catalog/submitted-job.ts";
import type { ClusterAsOf } from "../../projections/as-of/cluster-as-of.ts";
import type { JobHistory } from "../../projections/jobs/job-history.ts";
import type { JobViews } from "../../projections/jobs/job-views.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import { taskOf } from "../../../machines/job/job-spec.ts";
import type { JobState } from "../../../machines/job/job-state.ts";
import { jobVersions } from "../../../machines/job/job-versions.ts";
import {
  AS_OF_DESCRIPTIONS,
  AS_OF_FIELDS,
  AS_OF_POSITION_HEADER,
  asOfPosition,
  readAsOf,
} from "../as-of/as-of-query.ts";
import { operatorActor } from "../auth/principal.ts";
import { BasePutRequestFields } from "../bacalhau/base-put-request.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { KeysAs } from "../go-body-keys.ts";
import { QueryBool } from "../query-bool.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import { ExecutionJson, JobHistoryJson, JobJson, executionJson, jobJson } from "./job-json.ts";
import { resolveJobVersion, type SubmittedJob } from "./job-lookup.ts";
import { JOB_VERSIONS_FIELDS, JobVersion, LOOKUP_DESCRIPTIONS, Namespace } from "./job-lookup-query.ts";
import { ListJobsQuery, queryJobs } from "./job-query.ts";

export interface JobRouteDeps {
  readonly control: JobControl;
  readonly views: JobViews;
  /** The job read model's progress: a write waits for it before answering (read-your-writes). */
  readonly projection: ProcessorProgress;
  readonly history: JobHistory;
  /** The cluster as of a moment: `as_of` and `at_position` on the list and on a job's read. */
  readonly asOf: ClusterAsOf;
  /** A stop on the job's exact id, carried out by the holder of the `jobs` duty (stopJobCommand). */
  readonly stop: (jobId: string, reason: string, context: CommandContext) => Promise<CommandOutcome>;
}

/**
 * `{Job}` as Bacalhau's PutJobRequest has it. The job is validated by the job's rules
 * (src/actors/job-submission/), not here, so that every problem is named with its field path and
 * names match case-insensitively; the document shows the job as the catalog's `SubmittedJob`.
 */
export const PutJobRequest = Schema.Struct({
  Job: Schema.Unknown.annotations({ jsonSchema: submittedJobJsonSchema(), [KeysAs]: SubmittedJobSchema }),
  Force: Schema.optional(Schema.Boolean),
  ...BasePutRequestFields,
});
/** The JSON Schema of a submitted job, without the `$schema` line (a document part, not a document). */
function submittedJobJsonSchema(): object {
  const { $schema: _, ...schema } = JSONSchema.make(SubmittedJobSchema);
  return schema;
}

export const PutJobResponse = Schema.Struct({
  JobID: Schema.String,
  EvaluationID: Schema.String,
  Warnings: Schema.Array(Schema.String),
});
export const ListJobsResponse = Schema.Struct({ Items: Schema.Array(JobJson), NextToken: Schema.String });
export const ListExecutionsResponse = Schema.Struct({ Items: Schema.Array(ExecutionJson), NextToken: Schema.String });
export const ListHistoryResponse = Schema.Struct({ Items: Schema.Array(JobHistoryJson), NextToken: Schema.String });
export const GetJobResponse = Schema.Struct({
  Job: JobJson,
  Executions: Schema.optional(ListExecutionsResponse),
  History: Schema.optional(ListHistoryResponse),
});
export const StopJobResponse = Schema.Struct({ EvaluationID: Schema.String });
export const ListJobVersionsResponse = Schema.Struct({ Items: Schema.Array(JobJson), NextToken: Schema.String });

const IdParams = Schema.Struct({ id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)) });
const BY_ID = {
  params: IdParams,
  describe: {
    id: "Job ID (j-<uuid>), a unique prefix of it (the short form j-<8 hex>), or the job's name in namespace",
  },
};

// Empty is absent: the Python SDK sends next_token= on a first page.
const NextToken = Schema.String.pipe(
  Schema.pattern(/^(\d{1,16})?$/, { message: () => "next_token must be a NextToken returned by this endpoint" }),
);
const EXECUTION_ORDERS = ["created_at", "modified_at", "id"] as const;

/**
 * Bacalhau's GET /jobs/{id} includes every execution and history entry, and its WebUI's detail
 * page shows what it gets without paging; Shoal includes as many, up to this bound (past it, the
 * included list's NextToken continues on /executions or /history).
 */
const INCLUDED_MAX = 10_000;
const GetJobQuery = Schema.Struct({
  include: Schema.optional(
    Schema.String.pipe(
      // Bacalhau trims each item of the list.
      Schema.pattern(/^( *(executions|history) *(, *(executions|history) *)*)?$/, {
        message: () => 'include is a comma-separated list of "executions" and "history"',
      }),
    ),
  ),
  limit: Schema.optional(DecimalInteger(1, INCLUDED_MAX)),
  namespace: Namespace,
  job_version: JobVersion,
  ...AS_OF_FIELDS,
});
const ListQuery = Schema.Struct({ ...ListJobsQuery.fields, ...AS_OF_FIELDS });
const HistoryQuery = Schema.Struct({
  since: Schema.optional(DecimalInteger(0, 999_999_999_999)),
  event_type: Schema.optional(Schema.Literal("all", "job", "execution", "")),
  execution_id: Schema.optional(Schema.String.pipe(Schema.maxLength(256))),
  limit: Schema.optional(DecimalInteger(1, 1000)),
  next_token: Schema.optional(NextToken),
  ...JOB_VERSIONS_FIELDS,
  /** The Python SDK's history() sends node_id=; Bacalhau's server binds no such filter. */
  node_id: Schema.optional(
    Schema.Literal("").annotations({
      message: () => "node_id is not a filter of a job's history: filter by execution_id",
    }),
  ),
});
const ExecutionsQuery = Schema.Struct({
  ...JOB_VERSIONS_FIELDS,
  limit: Schema.optional(DecimalInteger(1, 1000)),
  next_token: Schema.optional(NextToken),
  order_by: Schema.optional(Schema.Literal(...EXECUTION_ORDERS, "")),
  reverse: Schema.optional(QueryBool),
});
const Reason = Schema.optional(Schema.String.pipe(Schema.maxLength(1024)));
const StopQuery = Schema.Struct({ reason: Reason, namespace: Namespace });
/**
 * Bacalhau's StopJobRequest as its Go client sends it, the reason in the body: the only place
 * Bacalhau's server reads it from (echo binds no query field without a query tag).
 */
export const StopJobRequest = Schema.Struct({ reason: Reason, ...BasePutRequestFields });
/** Bacalhau's paging of a job's versions: without a limit every version, with one a page and its NextToken. */
const VersionsQuery = Schema.Struct({
  namespace: Namespace,
  limit: Schema.optional(DecimalInteger(1, 1000)),
  next_token: Schema.optional(NextToken),
  order_by: Schema.optional(Schema.Literal("created_at", "modified_at", "version", "")),
  reverse: Schema.optional(QueryBool),
});

const DEFAULT_LIMIT = 100;

/**
 * A page of a list that only ever grows at its end (a job's executions, its versions): the token is an offset in it.
 */
function offsetPage<T>(all: readonly T[], nextToken: string | undefined, limit: number) {
  const from = nextToken === undefined ? 0 : Number(nextToken);
  return { Items: all.slice(from, from + limit), NextToken: from + limit < all.length ? String(from + limit) : "" };
}

/** A stop names the job's namespace in the query, the body (Bacalhau's Go client) or both, which must agree. */
function stopNamespace(query: string | undefined, body: string | undefined): string | undefined {
  if (query && body && query !== body)
    throw badRequest(`namespace ${JSON.stringify(query)} in the query and ${JSON.stringify(body)} in the body differ`);
  return body || query;
}

export function jobRoutes(jobs: JobRouteDeps): AnyRoute[] {
  /** The job a path names, at the version asked for (0 or absent: its current one; Bacalhau: version not found). */
  const jobOf = (
    id: string,
    query: { readonly namespace?: string | undefined; readonly job_version?: number | undefined },
    views: JobViews = jobs.views,
  ): SubmittedJob => resolveJobVersion(views, id, query.namespace, query.job_version ?? 0).at;
  /** Which version's entries a list shows (undefined: every one): the job's as asked for, unless all_job_versions. */
  const versionShown = (
    job: { readonly version: number },
    query: { readonly all_job_versions?: boolean | undefined },
  ) => (query.all_job_versions ? undefined : job.version);
  const executionsPage = (
    job: SubmittedJob,
    query: Omit<typeof ExecutionsQuery.Type, "namespace">,
    views: JobViews = jobs.views,
  ) => {
    const order = query.order_by || "created_at";
    const key = (e: ReturnType<typeof executionJson>) =>
      order === "id" ? e.ID : order === "modified_at" ? e.ModifyTime : e.CreateTime;
    const cmp = (a: ReturnType<typeof executionJson>, b: ReturnType<typeof executionJson>) => {
      const ka = key(a);
      const kb = key(b);
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    };
    const task = taskOf(job.spec).Name;
    // A stable sort of the executions in creation order: equal keys stay in creation order.
    const version = versionShown(job, query);
    const all = views
      .executionsOfJob(job.jobId)
      .filter((e) => version === undefined || e.jobVersion === version)
      .map((e) => executionJson(e, task));
    all.sort(cmp);
    if (query.reverse) all.reverse();
    return offsetPage(all, query.next_token, query.limit ?? DEFAULT_LIMIT);
  };
  const historyPage = async (
    job: JobState,
    query: typeof HistoryQuery.Type,
    past?: { readonly executionIds: readonly string[]; readonly through: number },
  ) => {
    const ids = past?.executionIds ?? jobs.views.executionsOfJob(job.jobId).map((e) => e.executionId);
    const version = versionShown(job, query);
    const page = await jobs.history.entries(job.jobId, ids, {
      ...(version === undefined ? {} : { jobVersion: version }),
      ...(past ? { through: past.through } : {}),
      eventType: query.event_type || "all",
      limit: query.limit ?? DEFAULT_LIMIT,
      ...(query.since === undefined ? {} : { since: query.since }),
      ...(query.execution_id ? { executionId: query.execution_id } : {}),
      ...(query.next_token === undefined ? {} : { after: Number(query.next_token) }),
    });
    return { Items: page.items, NextToken: page.next === undefined ? "" : String(page.next) };
  };

  const putJob = defineRoute({
    method: "PUT",
    path: "/api/v1/orchestrator/jobs",
    operationId: "putJob",
    tags: ["Jobs"],
    summary: "Submits a job to the orchestrator.",
    description:
      "Submits a job (Bacalhau's models.Job). An invalid one is refused with every problem named, and nothing is " +
      "stored. A job whose Name a job of its namespace has updates that job to its next version; an unchanged " +
      "spec is refused unless Force.",
    capability: "write:job",
    body: PutJobRequest,
    bodyComponent: "PutJobRequest",
    responses: {
      "200": {
        description: "The job was stored; EvaluationID is empty (Shoal has no evaluations)",
        schema: PutJobResponse,
      },
    },
    errors: ["BadRequest", "Conflict", "PayloadTooLarge", "UnsupportedMediaType", "Unavailable"],
    handler: async ({ body }, request) => {
      const context = commandContext(operatorActor(request), { correlationId: String(request.id) });
      const submitted = await jobs.control.submit(body.Job, context, {
        namespace: body.Namespace,
        idempotencyToken: body.IdempotencyToken,
        force: body.Force,
      });
      await jobs.projection.waitFor(submitted.position);
      return { JobID: submitted.jobId, EvaluationID: "", Warnings: submitted.warnings };
    },
  });

  return [
    putJob,
    // Bacalhau's router takes POST as PUT (pkg/publicapi/endpoint/orchestrator/endpoint.go); its swagger has PUT only.
    { ...putJob, method: "POST", operationId: "postJob", undocumented: true },
    defineRoute({
      method: "GET",
      path: "/api/v1/orchestrator/jobs",
      operationId: "listJobs",
      tags: ["Jobs"],
      summary: "Returns a list of jobs.",
      description:
        "Jobs, filtered by namespace and label selector, ordered and paged; with as_of or at_position, the " +
        "list as it was at that moment.",
      capability: "read:job",
      query: ListQuery,
      describe: {
        limit: "Page size (default 100)",
        next_token: "Cursor from the previous page's NextToken",
        order_by: "created_at (default), modified_at or id",
        reverse: "Reverse the order",
        namespace: "Only jobs of this namespace (default, empty or `*`: every namespace)",
        labels: "Kubernetes label selector on the jobs' labels; may repeat (joined with commas)",
        ...AS_OF_DESCRIPTIONS,
      },
      responses: { "200": { description: "Jobs", schema: ListJobsResponse } },
      errors: ["BadRequest"],
      handler: async ({ query }, _request, reply) => {
        const list = (views: JobViews) => {
          const page = queryJobs(views, query);
          return { Items: page.Items.map(jobJson), NextToken: page.NextToken };
        };
        const position = await asOfPosition(jobs.asOf, query);
        if (position === undefined) return list(jobs.views);
        const past = await jobs.asOf.jobs.read(position, (model) => list(model.views));
        void reply.header(AS_OF_POSITION_HEADER, String(position));
        return past;
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/orchestrator/jobs/:id",
      operationId: "getJob",
      tags: ["Jobs"],
      summary: "Returns a job.",
      description:
        "One job by its id (or a unique prefix, or its name within a namespace), with its executions and " +
        "history when include asks for them; with as_of or at_position, the job as it was then.",
      capability: "read:job",
      ...BY_ID,
      query: GetJobQuery,
      describe: {
        ...BY_ID.describe,
        ...LOOKUP_DESCRIPTIONS,
        include: '"executions", "history" or both, comma-separated',
        limit: "Size of the included lists (default: all of them, up to 10,000)",
        ...AS_OF_DESCRIPTIONS,
      },
      responses: {
        "200": { description: "The job, with its executions and history when asked for", schema: GetJobResponse },
      },
      errors: ["BadRequest", "NotFound"],
      handler: async ({ params, query }, _request, reply) => {
        const include = new Set(
          (query.include ?? "")
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s !== ""),
        );
        const limit = { limit: query.limit ?? INCLUDED_MAX };
        const position = await asOfPosition(jobs.asOf, query);
        if (position === undefined) {
          const job = jobOf(params.id, query);
          return {
            Job: jobJson(job),
            ...(include.has("executions") ? { Executions: executionsPage(job, limit) } : {}),
            ...(include.has("history") ? { History: await historyPage(job, limit) } : {}),
          };
        }
        // The read model's part is taken as of the position at once; the history is read from the streams after.
        const past = await readAsOf(position, () =>
          jobs.asOf.jobs.read(position, ({ views }) => {
            const job = jobOf(params.id, query, views);
            return {
              job,
              executions: include.has("executions") ? executionsPage(job, limit, views) : undefined,
              executionIds: views.executionsOfJob(job.jobId).map((e) => e.executionId),
            };
          }),
        );
        const history = include.has("history")
          ? await historyPage(past.job, limit, { executionIds: past.executionIds, through: position })
          : undefined;
        void reply.header(AS_OF_POSITION_HEADER, String(position));
        return {
          Job: jobJson(past.job),
          ...(past.executions ? { Executions: past.executions } : {}),
          ...(history ? { History: history } : {}),
        };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/orchestrator/jobs/:id/history",
      operationId: "jobHistory",
      tags: ["Jobs"],
      summary: "Returns the history of a job.",
      description:
        "The job's and its executions' history entries in Bacalhau's shape, oldest first, filtered by time, " +
        "kind and execution, paged.",
      capability: "read:job",
      ...BY_ID,
      query: HistoryQuery,
      describe: {
        ...BY_ID.describe,
        since: "Unix seconds: only entries at or after it",
        event_type: "all (default), job or execution",
        execution_id: "Only this execution's entries",
        limit: "Page size (default 100)",
        next_token: "Cursor from the previous page's NextToken",
        ...LOOKUP_DESCRIPTIONS,
        all_job_versions: "Every version's entries (default: the version asked for, else the current one's)",
      },
      responses: {
        "200": { description: "The job's and its executions' history, oldest first", schema: ListHistoryResponse },
      },
      errors: ["BadRequest", "NotFound"],
      handler: async ({ params, query }) => historyPage(jobOf(params.id, query), query),
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/orchestrator/jobs/:id/executions",
      operationId: "jobExecutions",
      tags: ["Jobs"],
      summary: "Returns the executions of a job.",
      description:
        "The job's executions in Bacalhau's models.Execution shape (where each runs, its states, its output), " +
        "ordered and paged.",
      capability: "read:job",
      ...BY_ID,
      query: ExecutionsQuery,
      describe: {
        ...BY_ID.describe,
        ...LOOKUP_DESCRIPTIONS,
        all_job_versions: "Every version's executions (default: the version asked for, else the current one's)",
        limit: "Page size (default 100)",
        next_token: "Cursor from the previous page's NextToken",
        order_by: "created_at (default), modified_at or id",
        reverse: "Reverse the order",
      },
      responses: { "200": { description: "The job's executions", schema: ListExecutionsResponse } },
      errors: ["BadRequest", "NotFound"],
      handler: async ({ params, query }) => executionsPage(jobOf(params.id, query), query),
    }),
    defineRoute({
      method: "GET",
      path: "/api/v1/orchestrator/jobs/:id/versions",
      operationId: "jobVersions",
      tags: ["Jobs"],
      summary: "Returns the versions of a job.",
      description:
        "Every version of the job, oldest first: each as it stood when the next replaced it, the current one last.",
      capability: "read:job",
      ...BY_ID,
      query: VersionsQuery,
      describe: {
        ...BY_ID.describe,
        namespace: LOOKUP_DESCRIPTIONS.namespace,
        limit: "Page size (default: every version)",
        next_token: "Cursor from the previous page's NextToken",
        order_by: "created_at, modified_at or version (default: version)",
        reverse: "Reverse the order",
      },
      responses: { "200": { description: "Every version of the job", schema: ListJobVersionsResponse } },
      errors: ["BadRequest", "NotFound"],
      handler: async ({ params, query }) => {
        const versions = jobVersions(jobOf(params.id, query)).map(jobJson);
        if (query.order_by === "modified_at") versions.sort((a, b) => a.ModifyTime - b.ModifyTime);
        if (query.reverse) versions.reverse();
        return offsetPage(versions, query.next_token, query.limit ?? versions.length);
      },
    }),
    defineRoute({
      method: "DELETE",
      path: "/api/v1/orchestrator/jobs/:id",
      operationId: "stopJob",
      tags: ["Jobs"],
      summary: "Stops a job.",
      description:
        "Stops a job, as Bacalhau: a Stopped job stays as it is; a Completed or Failed one cannot be stopped (409).",
      capability: "write:job",
      ...BY_ID,
      query: StopQuery,
      body: StopJobRequest,
      bodyComponent: "StopJobRequest",
      describe: {
        ...BY_ID.describe,
        namespace: LOOKUP_DESCRIPTIONS.namespace,
        reason: "Why (the job's state message and history say it)",
      },
      responses: {
        "200": {
          description: "The job is Stopped; EvaluationID is empty (Shoal has no evaluations)",
          schema: StopJobResponse,
        },
      },
      errors: ["BadRequest", "NotFound", "Conflict", "Unavailable"],
      handler: async ({ params, query, body }, request) => {
        const { jobId } = jobOf(params.id, { namespace: stopNamespace(query.namespace, body.Namespace) });
        // As Bacalhau's server, the body's reason; the query's is what the WebUI and the Python SDK send.
        const reason = body.reason || query.reason || "";
        const context = commandContext(operatorActor(request), {
          ...(reason ? { reason } : {}),
          correlationId: String(request.id),
        });
        const stopped = await jobs.stop(jobId, reason, context);
        await jobs.projection.waitFor(stopped.position);
        return { EvaluationID: "" };
      },
    }),
  ];
}
