import { Readable } from "node:stream";
import { Schema } from "effect";
import type { FastifyRequest } from "fastify";
import { defineRoute, type AnyRoute } from "../route.ts";
import { JOB_VERSIONS_FIELDS, LOOKUP_DESCRIPTIONS, Namespace } from "./job-lookup-query.ts";
import type { JobResults, PublishedExecution } from "./job-results.ts";

export const JOB_RESULTS_PATH = "/api/v1/orchestrator/jobs/:id/results";
export const JOB_RESULT_PATH = "/api/v1/orchestrator/jobs/:id/results/:executionId";

const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256));

/** Bacalhau's models.SpecConfig as a result: `urlDownload` with the URL the archive is read from. */
export const ResultSpecJson = Schema.Struct({
  Type: Schema.String,
  Params: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number) }),
});
/** Bacalhau's apimodels.ListJobResultsResponse. */
export const ListJobResultsResponse = Schema.Struct({ Items: Schema.Array(ResultSpecJson), NextToken: Schema.String });

/**
 * Where a result is downloaded: this API, which reads it from its node (nodes are not reachable by
 * clients). Bacalhau's shape, with what the download must be (Bytes, SHA256) beside the URL.
 */
function resultSpec(request: FastifyRequest, jobId: string, e: PublishedExecution): typeof ResultSpecJson.Type {
  const path = JOB_RESULT_PATH.replace(":id", jobId).replace(":executionId", e.executionId);
  return {
    Type: "urlDownload",
    Params: {
      ...e.publishedResult.Params,
      URL: `${request.protocol}://${request.host}${path}`,
      ExecutionID: e.executionId,
    },
  };
}

/** `GET /jobs/{id}/results` (Bacalhau's) and the download of one result (docs/jobs.md, Results). */
export function jobResultsRoutes(results: JobResults): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: JOB_RESULTS_PATH,
      operationId: "orchestrator/jobResults",
      tags: ["Jobs"],
      summary: "Returns the results of a job.",
      capability: "read:job",
      description:
        "The published result of each of the job's completed executions whose task has a Publisher, " +
        "oldest first, of the job's current version (as Bacalhau's) unless job_version or all_job_versions " +
        "asks for others: `urlDownload` with the URL that serves its `.tar.gz` (read from its node), its " +
        "size in Bytes and its SHA256. A job without a publisher has none.",
      params: Schema.Struct({ id: Id }),
      query: Schema.Struct(JOB_VERSIONS_FIELDS),
      describe: {
        id: "Job id (j-<uuid>), name or short id",
        ...LOOKUP_DESCRIPTIONS,
        all_job_versions: "Every version's results (default: the version asked for, else the current one's)",
      },
      responses: { "200": { description: "The job's results", schema: ListJobResultsResponse } },
      errors: ["BadRequest", "NotFound"],
      handler: async ({ params, query }, request) => {
        const { jobId, executions } = results.list(params.id, query);
        return { Items: executions.map((e) => resultSpec(request, jobId, e)), NextToken: "" };
      },
    }),
    defineRoute({
      method: "GET",
      path: JOB_RESULT_PATH,
      operationId: "orchestrator/jobResult",
      tags: ["Jobs"],
      summary: "Downloads one execution's published result.",
      capability: "read:job",
      description:
        "The execution's result archive (gzip-compressed tar: its result paths by name, stdout, " +
        "stderr, exitCode), streamed from the node that published it. NotFound when the execution has " +
        "no published result or its node no longer holds it; Unavailable when the node does not answer.",
      params: Schema.Struct({ id: Id, executionId: Id }),
      query: Schema.Struct({ namespace: Namespace }),
      describe: {
        id: "Job id (j-<uuid>), name or short id",
        executionId: "The execution (e-<uuid>), of any of the job's versions",
        namespace: LOOKUP_DESCRIPTIONS.namespace,
      },
      responses: { "200": { description: "The archive", contentType: "application/gzip" } },
      errors: ["BadRequest", "NotFound", "Unavailable"],
      handler: async ({ params, query }, request, reply) => {
        const execution = results.execution(params.id, params.executionId, query.namespace);
        const abort = new AbortController();
        reply.raw.once("close", () => abort.abort());
        const chunks = results.read(execution, abort.signal);
        // The first chunk before the headers: a node that lost the result is a 404, not a broken 200.
        const first = await chunks.next();
        async function* rest(): AsyncGenerator<Uint8Array> {
          if (!first.done) yield first.value;
          try {
            yield* chunks;
          } catch (e) {
            request.log.warn({ err: e, executionId: execution.executionId }, "result download cut short");
            throw e;
          }
        }
        const bytes = execution.publishedResult.Params.Bytes;
        if (typeof bytes === "number") reply.header("content-length", bytes);
        reply.header("content-type", "application/gzip");
        reply.header("content-disposition", `attachment; filename="${execution.executionId}.tar.gz"`);
        return reply.send(Readable.from(rest(), { objectMode: false }));
      },
    }),
  ];
}
