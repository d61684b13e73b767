import { describe, expect, it } from "vitest";
import { parseJobDocument } from "../../../src/cli/commands/job-run-command.ts";
import { jobWrapperKey } from "../../../src/cli/unwrap-job.ts";

const job = { Type: "batch", Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } }] };

describe("a job file's job", () => {
  it("is the document, or the job under a Job key in any case, as the API matches a body's keys", async () => {
    expect(await parseJobDocument(JSON.stringify(job), "job.json")).toEqual(job);
    for (const key of ["Job", "job", "JOB"]) {
      expect(await parseJobDocument(JSON.stringify({ [key]: job }), "job.json"), key).toEqual(job);
      expect(await parseJobDocument(`${key}:\n  Type: batch\n  Tasks: []\n`, "job.yaml"), key).toEqual({
        Type: "batch",
        Tasks: [],
      });
    }
  });

  it("is the document itself when it has Tasks in any case, or its Job key holds no object", async () => {
    const withJobField = { ...job, Job: { Type: "ops" } };
    expect(await parseJobDocument(JSON.stringify(withJobField), "job.json")).toEqual(withJobField);
    const lower = { tasks: job.Tasks, job: { Type: "ops" } };
    expect(await parseJobDocument(JSON.stringify(lower), "job.json")).toEqual(lower);
    expect(jobWrapperKey({ Job: "j-1" })).toBeUndefined();
    expect(jobWrapperKey({ Job: [job] })).toBeUndefined();
    expect(jobWrapperKey({ jOb: job })).toBe("jOb");
  });
});
