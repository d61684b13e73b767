import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../../machines/job/job-defaults.ts";
import { validateJobSubmission } from "../../../src/actors/job-submission/validate-job-submission.ts";
import { StoredJobSpec } from "../../../src/events/catalog/job-spec.ts";

describe("the stored job spec schema", () => {
  it("reads back every spec the validation makes", () => {
    const inputs = [
      { Type: "batch", Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } }] },
      {
        Type: "service",
        Count: 2,
        Labels: { a: "b" },
        Constraints: [{ Key: "zone", Operator: "notin", Values: ["x"] }],
        Tasks: [
          {
            Name: "web",
            Engine: {
              Type: "docker",
              Params: {
                Image: "busybox",
                Entrypoint: ["sh", "-c"],
                Parameters: ["sleep 1"],
                WorkingDirectory: "/tmp",
                EnvironmentVariables: ["A=1"],
              },
            },
            Env: { MODE: "x" },
            Resources: { CPU: "1", Memory: "1Gi", Disk: "1Gb", GPU: "1" },
            Network: { Type: "HTTP", Domains: ["example.com"] },
            Timeouts: { QueueTimeout: 60 },
          },
        ],
      },
    ];
    for (const input of inputs) {
      const result = validateJobSubmission(input, {
        jobId: "j-00000000-0000-4000-8000-000000000001",
        defaults: BACALHAU_JOB_DEFAULTS,
      });
      if (!result.ok) throw new Error("fixture invalid");
      const stored = JSON.parse(JSON.stringify(result.spec));
      expect(Schema.decodeUnknownSync(StoredJobSpec)(stored)).toEqual(result.spec);
    }
  });
});
