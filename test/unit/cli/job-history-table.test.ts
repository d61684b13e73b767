import { describe, expect, it } from "vitest";
import { describeText } from "../../../src/cli/commands/job-describe-command.ts";
import { HISTORY_COLUMNS } from "../../../src/cli/commands/job-history-command.ts";
import type { JobHistoryJson, JobJson } from "../../../src/cli/job-shapes.ts";
import { renderRows } from "../../../src/cli/render-rows.ts";

const JOB_ID = "j-7a4c7576-5fbf-461b-b644-952b571ec500";
const EXEC_ID = "e-e8b890b4-75c0-5d13-9c78-52fc3e7fb91d";
const TIME = "2026-11-29T08:00:00.000Z";

const entry = (over: Partial<JobHistoryJson> & { Event: JobHistoryJson["Event"] }): JobHistoryJson => ({
  Type: "JobLevel",
  JobID: JOB_ID,
  JobVersion: 1,
  Time: TIME,
  SeqNum: 1,
  ...over,
});
const event = (Message: string, Details: Record<string, string>) => ({
  Topic: "Scheduling",
  Message,
  Details,
  Timestamp: TIME,
});

const history: JobHistoryJson[] = [
  entry({ Event: { ...event("Job submitted", { Actor: "operator:alice" }), Topic: "Submission" } }),
  entry({
    Type: "ExecutionLevel",
    ExecutionID: EXEC_ID,
    Event: { ...event("Accepted job", { Actor: "node:n-3" }), Topic: "Exec Scanning" },
  }),
  // Stored by a Shoal that did not record who acted.
  entry({ Event: event("Job requested to stop before completion", { Reason: "enough" }) }),
  // An id is the caller's text: a terminal escape in it is shown, never run.
  entry({ Event: event("Running", { Actor: "operator:\u001b[2Jmallory" }) }),
];

/** A batch job as `job describe` reads it, in `State`. */
const batchJob = (State: { StateType: string; Message: string }) =>
  ({
    ID: JOB_ID,
    Name: "j",
    Namespace: "default",
    Type: "batch",
    Count: 1,
    State,
    Version: 1,
    CreateTime: Date.parse(TIME) * 1e6,
    ModifyTime: Date.parse(TIME) * 1e6,
  }) as unknown as JobJson;
const cells = (table: string) => table.split("\n").map((line) => line.split(/ {2,}/));

describe("job history tables: BY, who caused each entry", () => {
  it("shoal job history: a BY column between the execution id and the topic", () => {
    const rows = cells(
      renderRows(HISTORY_COLUMNS, history, { format: "table", wide: false, style: false, header: true }),
    );
    expect(rows[0]).toEqual(["TIME", "LEVEL", "JOB VERSION", "EXEC. ID", "BY", "TOPIC", "EVENT"]);
    expect(rows.slice(1).map((r) => r.slice(1))).toEqual([
      ["JobLevel", "1", "operator:alice", "Submission", "Job submitted"],
      ["ExecutionLevel", "1", "e-e8b890b4", "node:n-3", "Exec Scanning", "Accepted job"],
      ["JobLevel", "1", "-", "Scheduling", "Job requested to stop before completion"],
      ["JobLevel", "1", "operator:\\u001b[2Jmallory", "Scheduling", "Running"],
    ]);
  });

  it("shoal job describe: its history tables have BY after the time", () => {
    const job = batchJob({ StateType: "Stopped", Message: "enough" });
    const text = describeText({ Job: job, History: { Items: history } });
    const jobHistory = /Job History\n((?:.+\n?)+)/.exec(text)?.[1];
    expect(cells((jobHistory ?? "").trimEnd()).map((r) => r.slice(1))).toEqual([
      ["BY", "TOPIC", "EVENT"],
      ["operator:alice", "Submission", "Job submitted"],
      ["-", "Scheduling", "Job requested to stop before completion"],
      ["operator:\\u001b[2Jmallory", "Scheduling", "Running"],
    ]);
    expect(text).not.toContain("\u001b");
  });

  it("shoal job describe: a multi-line message is one line of its summary, as in the tables", () => {
    const job = batchJob({ StateType: "Failed", Message: "exit code 1\n\nlast line:\r\n  oops" });
    const lines = describeText({ Job: job }).split("\n");
    expect(lines.find((l) => l.startsWith("Message"))).toMatch(/^Message\s+= exit code 1; last line:; oops$/);
    expect(lines[lines.findIndex((l) => l.startsWith("Message")) + 1]).toMatch(/^Count\s+= 1$/);
  });
});
