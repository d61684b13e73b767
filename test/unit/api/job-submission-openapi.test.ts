import { JSONSchema } from "effect";
import { describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../../machines/job/job-defaults.ts";
import { RESOURCE_FORMS } from "../../../machines/job/task-resources.ts";
import { problemText, validateJobSubmission } from "../../../src/actors/job-submission/validate-job-submission.ts";
import { jobRoutes, type JobRouteDeps } from "../../../src/api/jobs/job-routes.ts";
import { openApiDocument } from "../../../src/api/openapi.ts";
import { SubmittedJob } from "../../../src/events/catalog/submitted-job.ts";

// The document is built from the routes' declarations; no handler runs, so no dependency is used.
const unusedDeps = {} as unknown as JobRouteDeps;

interface Schema7 {
  readonly properties?: Record<string, Schema7>;
  readonly items?: Schema7;
  readonly enum?: readonly string[];
  readonly $ref?: string;
  readonly description?: string;
}
type Doc = {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema7 }> } }>>;
  components: { schemas: Record<string, Schema7> };
};

const doc = openApiDocument(jobRoutes(unusedDeps)) as unknown as Doc;
const bodyRef = doc.paths["/api/v1/orchestrator/jobs"]?.put?.requestBody?.content["application/json"]?.schema.$ref;
const body = doc.components.schemas[(bodyRef ?? "").replace("#/components/schemas/", "")];
const jobSchema = body?.properties?.Job;

const ID = "j-00000000-0000-4000-8000-000000000001";
const task = { Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } };
const problems = (job: unknown): string[] => {
  const result = validateJobSubmission(job, { jobId: ID, defaults: BACALHAU_JOB_DEFAULTS });
  return result.ok ? [] : result.problems.map(problemText);
};

describe("the OpenAPI request body of PUT /api/v1/orchestrator/jobs", () => {
  it("is the catalog's SubmittedJob schema", () => {
    const { $schema: _, ...expected } = JSONSchema.make(SubmittedJob);
    expect(jobSchema).toEqual(expected);
  });

  it("offers exactly the job types, network types and operators validation accepts", () => {
    const types = jobSchema?.properties?.Type?.enum ?? [];
    expect(types.length).toBeGreaterThan(0);
    for (const Type of types) expect(problems({ Type, Tasks: [task] }), Type).toEqual([]);
    expect(problems({ Type: "cron", Tasks: [task] })).toEqual([
      `Type: invalid job type: "cron" (one of ${types.join(", ")})`,
    ]);

    const operators = jobSchema?.properties?.Constraints?.items?.properties?.Operator?.enum ?? [];
    expect(operators.length).toBeGreaterThan(0);
    expect(
      problems({ Type: "batch", Constraints: [{ Key: "k", Operator: "like", Values: ["v"] }], Tasks: [task] }),
    ).toEqual([`Constraints[0].Operator: unknown operator "like" (one of ${operators.join(" ")})`]);

    const network = jobSchema?.properties?.Tasks?.items?.properties?.Network?.properties?.Type as
      { anyOf?: Schema7[] } | undefined;
    const networks = network?.anyOf?.flatMap((s) => s.enum ?? []) ?? [];
    expect(networks.length).toBeGreaterThan(0);
    for (const Type of networks) {
      expect(problems({ Type: "batch", Tasks: [{ ...task, Network: { Type } }] }), Type).toEqual([]);
    }
    expect(problems({ Type: "batch", Tasks: [{ ...task, Network: { Type: "Carrier" } }] })).toEqual([
      `Tasks[0].Network.Type: invalid networking type "Carrier" (one of ${networks.join(", ")})`,
    ]);
  });

  it("describes each resource as the message that refuses a malformed one does", () => {
    const resources = jobSchema?.properties?.Tasks?.items?.properties?.Resources?.properties ?? {};
    for (const key of ["CPU", "Memory", "Disk", "GPU"] as const) {
      expect(resources[key]?.description, key).toBe(RESOURCE_FORMS[key]);
      const [problem] = problems({ Type: "batch", Tasks: [{ ...task, Resources: { [key]: "lots" } }] });
      expect(problem, key).toContain(`(${RESOURCE_FORMS[key]})`);
    }
  });
});
