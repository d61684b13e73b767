import { Schema } from "effect";
import { commandContext, type CommandContext } from "../../actors/command-context.ts";
import type { CommandOutcome } from "../../cluster/owned-command.ts";
import { ShoalError, notFound } from "../../errors/shoal-error.ts";
import { jobSpecDiff } from "../../../machines/job/job-spec-diff.ts";
import { invalidJob } from "../../../machines/job/spec-fields.ts";
import { jobRefusalError } from "../../actors/job-kind.ts";
import { operatorActor } from "../auth/principal.ts";
import { BasePutRequestFields } from "../bacalhau/base-put-request.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import { resolveJob } from "./job-lookup.ts";
import type { JobRouteDeps } from "./job-routes.ts";
import { PutJobRequest } from "./job-routes.ts";

/** What the version routes need beyond the job routes': a rerun, carried out by the holder of the `jobs` duty. */
export interface JobVersionRouteDeps extends JobRouteDeps {
  readonly rerun: (jobId: string, version: number, reason: string, context: CommandContext) => Promise<CommandOutcome>;
}

/** Bacalhau's DiffJobRequest: the job to compare with the job of its name. */
export const DiffJobRequest = Schema.Struct({ Job: PutJobRequest.fields.Job, ...BasePutRequestFields });
export const DiffJobResponse = Schema.Struct({ Diff: Schema.String, Warnings: Schema.Array(Schema.String) });
/** Bacalhau's RerunJobRequest: the version to run again (0 or absent: the current one) and why. */
export const RerunJobRequest = Schema.Struct({
  JobVersion: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(0, 999_999_999_999))),
  Reason: Schema.optional(Schema.String.pipe(Schema.maxLength(1024))),
  ...BasePutRequestFields,
});
export const RerunJobResponse = Schema.Struct({
  JobID: Schema.String,
  JobVersion: Schema.Number,
  EvaluationID: Schema.String,
  Warnings: Schema.Array(Schema.String),
});
const IdParams = Schema.Struct({ id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)) });

/** The diff of a job against the job of its name, and a job's rerun: Bacalhau ≥ 1.8's routes of job versions. */
export function jobVersionRoutes(jobs: JobVersionRouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: "PUT",
      path: "/api/v1/orchestrator/jobs/diff",
      operationId: "diffJob",
      tags: ["Jobs"],
      summary: "Compares a job spec with the existing job of the same name.",
      description:
        "What submitting the job would change in the job of its name (Bacalhau's DiffJob): one `- Path: old` / " +
        "`+ Path: new` line per changed value, empty when nothing would. Stores nothing; a PUT, as Bacalhau's, so " +
        "it takes write:job (a submitter's dry run).",
      capability: "write:job",
      body: DiffJobRequest,
      bodyComponent: "DiffJobRequest",
      responses: { "200": { description: "What would change", schema: DiffJobResponse } },
      errors: ["BadRequest", "NotFound", "PayloadTooLarge", "UnsupportedMediaType"],
      handler: async ({ body }) => {
        const { submission, named } = jobs.control.prepare(body.Job, body.Namespace);
        if (!submission.ok) throw jobRefusalError(invalidJob(submission.problems));
        if (!named) {
          throw new ShoalError({
            kind: "BadRequest",
            message: "invalid job spec: name is missing",
            hint: "Job name must be provided in the job spec for diff operations",
          });
        }
        const { spec, warnings } = submission;
        const ids = jobs.views.index.idsNamed(spec.Namespace, spec.Name);
        const existing = ids.length === 0 ? undefined : resolveJob(jobs.views, spec.Name, spec.Namespace);
        if (existing === undefined) throw notFound(`job not found: ${spec.Name} (in namespace ${spec.Namespace})`);
        return { Diff: jobSpecDiff(existing.spec, spec), Warnings: warnings };
      },
    }),
    defineRoute({
      method: "PUT",
      path: "/api/v1/orchestrator/jobs/:id/rerun",
      operationId: "rerunJob",
      tags: ["Jobs"],
      summary: "Reruns a job.",
      description:
        "Runs the spec of a version of the job (JobVersion; 0 or absent: its current one) again as its next " +
        "version, as Bacalhau's rerun: a job Pending or Queued cannot be rerun (409).",
      capability: "write:job",
      params: IdParams,
      describe: {
        id: "Job ID (j-<uuid>), a unique prefix of it, or the job's name in namespace (the body's Namespace)",
      },
      body: RerunJobRequest,
      bodyComponent: "RerunJobRequest",
      responses: {
        "200": {
          description: "The job's new version; EvaluationID is empty (Shoal has no evaluations)",
          schema: RerunJobResponse,
        },
      },
      errors: ["BadRequest", "NotFound", "Conflict", "Unavailable"],
      handler: async ({ params, body }, request) => {
        const { jobId } = resolveJob(jobs.views, params.id, body.Namespace);
        const reason = body.Reason ?? "";
        const context = commandContext(operatorActor(request), {
          ...(reason ? { reason } : {}),
          correlationId: String(request.id),
        });
        const rerun = await jobs.rerun(jobId, body.JobVersion ?? 0, reason, context);
        await jobs.projection.waitFor(rerun.position);
        const JobVersion = jobs.views.job(jobId)?.version ?? 0;
        return { JobID: jobId, JobVersion, EvaluationID: "", Warnings: [] };
      },
    }),
  ];
}
