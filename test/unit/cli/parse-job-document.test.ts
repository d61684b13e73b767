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

  it("is refused in one line when it is an alias bomb or has a list or a map as a key, and nothing is written to stderr", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      // Seven levels of nine aliases each: 9^7 copies of "x" if the aliases were expanded.
      const levels = ["a: &a [x, x, x, x, x, x, x, x, x]"];
      for (const [from, to] of ["ab", "bc", "cd", "de", "ef", "fg"])
        levels.push(`${to}: &${to} [${`*${from}, `.repeat(9)}]`);
      await expect(parseJobDocument(levels.join("\n"), "bomb.yaml")).rejects.toThrow(
        "the job file bomb.yaml: too many YAML aliases (more than 100 expanded)",
      );
      await expect(parseJobDocument("Type: batch\nLabels:\n  ? [a]\n  : b\n", "key.yaml")).rejects.toThrow(
        "key.yaml has a key that is a list or a map ([a]): keys must be plain values",
      );
      const anchored = "Type: batch\nTasks: &t []\nMeta: {tasks: *t}\n";
      expect(await parseJobDocument(anchored, "ok.yaml")).toEqual({ Type: "batch", Tasks: [], Meta: { tasks: [] } });
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
