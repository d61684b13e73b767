import { describe, expect, it } from "vitest";
import { executionDecider } from "../../../machines/execution/execution-decider.ts";
import type { ExecutionCommand } from "../../../machines/execution/execution-commands.ts";
import { BACALHAU_JOB_DEFAULTS } from "../../../machines/job/job-defaults.ts";
import { validateJobSubmission } from "../../../src/actors/job-submission/validate-job-submission.ts";
import type { JobCommand } from "../../../machines/job/job-commands.ts";
import { jobDecider } from "../../../machines/job/job-decider.ts";
import { CorruptEventError, InvalidEventError } from "../../../src/events/catalog/event-codec-errors.ts";
import {
  EXECUTION_EVENT_VERSIONS,
  decodeExecutionEvent,
  encodeExecutionEvent,
  encodeExecutionEventBySchema,
} from "../../../src/events/catalog/execution-event-codec.ts";
import {
  EXECUTION_EVENT_SCHEMAS,
  EXECUTION_EVENT_TYPES,
  type ExecutionEvent,
} from "../../../src/events/catalog/execution-events.ts";
import {
  JOB_EVENT_VERSIONS,
  decodeJobEvent,
  encodeJobEvent,
  encodeJobEventBySchema,
} from "../../../src/events/catalog/job-event-codec.ts";
import { JOB_EVENT_SCHEMAS, JOB_EVENT_TYPES, type JobEvent } from "../../../src/events/catalog/job-events.ts";
import { schemaFastPath } from "../../../src/events/catalog/schema-fast-path/schema-fast-path.ts";
import type { NewEvent, RecordedEvent } from "../../../src/events/store/event-store.ts";
import { executionStream, jobStream } from "../../../src/events/streams.ts";

const JOB = "j-00000000-0000-4000-8000-000000000001";
const EXEC = "e-00000000-0000-4000-8000-000000000002";
const metadata = {
  time: "2026-01-01T00:00:00.000Z",
  actor: { type: "operator" as const, id: "alice" },
  correlationId: "c-1",
  causationId: "c-1",
};
const asRecorded = (e: NewEvent, stream: string): RecordedEvent => ({
  ...e,
  stream,
  revision: 0,
  position: 1,
  time: metadata.time,
  data: JSON.parse(JSON.stringify(e.data)),
  metadata: JSON.parse(JSON.stringify(e.metadata)),
});

/** Every type of event, as the deciders make them. */
function jobEvents(): JobEvent[] {
  const run = (commands: JobCommand[], job: unknown): JobEvent[] => {
    let state = jobDecider.initialState(JOB);
    const out: JobEvent[] = [];
    const submission = validateJobSubmission(job, { jobId: JOB, defaults: BACALHAU_JOB_DEFAULTS });
    for (const command of [{ type: "Submit", submission } as JobCommand, ...commands]) {
      const d = jobDecider.decide(command, state, { now: 0 });
      if (!d.ok) throw new Error(JSON.stringify(d.refusal));
      for (const e of d.events) {
        out.push(e);
        state = jobDecider.evolve(state, e, metadata.time);
      }
    }
    return out;
  };
  const job = {
    Type: "batch",
    Tasks: [
      {
        Name: "main",
        Engine: { Type: "docker", Params: { Image: "busybox" } },
        Timeouts: { QueueTimeout: 60 },
        Resources: { GPU: "1" },
      },
    ],
  };
  return [
    ...run([{ type: "Queue", reason: "no nodes" }, { type: "Run" }, { type: "Complete" }], job),
    ...run([{ type: "Fail", reason: "boom" }], job).slice(1),
    ...run([{ type: "Stop", reason: "enough" }], job).slice(1),
    // An update of the completed job, then a rerun of its first version.
    ...run(
      [
        { type: "Run" },
        { type: "Complete" },
        {
          type: "Put",
          submission: validateJobSubmission({ ...job, Count: 2 }, { jobId: JOB, defaults: BACALHAU_JOB_DEFAULTS }),
          force: false,
        },
        { type: "Run" },
        { type: "HoldUpdate", reason: "not enough nodes to run job. requested: 2, available: 1, suitable: 1." },
        { type: "ResumeUpdate" },
        { type: "Rerun", version: 1, reason: "" },
      ],
      job,
    ).slice(3),
  ];
}

function executionEvents(): ExecutionEvent[] {
  const create: ExecutionCommand = {
    type: "Create",
    jobId: JOB,
    namespace: "default",
    nodeId: "n1",
    jobType: "batch",
    jobVersion: 1,
    partitionIndex: 0,
    resources: { CPU: 0.5, Memory: 1, Disk: 0, GPU: 0 },
    executionTimeout: 10,
    timeoutBuffer: 5,
  };
  const output = { Stdout: "hi", StdoutTruncated: false, stderr: "", StderrTruncated: true, ExitCode: 0, ErrorMsg: "" };
  const run = (commands: ExecutionCommand[]): ExecutionEvent[] => {
    let state = executionDecider.initialState(EXEC);
    const out: ExecutionEvent[] = [];
    for (const command of [create, ...commands]) {
      const d = executionDecider.decide(command, state, { now: 0 });
      if (!d.ok) throw new Error(JSON.stringify(d.refusal));
      for (const e of d.events) {
        out.push(e);
        state = executionDecider.evolve(state, e, metadata.time);
      }
    }
    return out;
  };
  return [
    ...run([
      { type: "AskForBid" },
      { type: "AcceptBid" },
      { type: "Approve" },
      { type: "Start" },
      { type: "Complete", output },
    ]),
    // A start with the limits the node runs it under.
    ...run([
      { type: "AskForBid" },
      { type: "AcceptBid" },
      { type: "Approve" },
      { type: "Start", details: { "HostConfig.PidsLimit": "1024", "HostConfig.CapDrop": "ALL" } },
    ]).slice(4),
    ...run([{ type: "DeclineBid", reason: "busy" }]).slice(1),
    ...run([{ type: "Reject", reason: "not needed" }]).slice(1),
    ...run([{ type: "Fail", reason: "boom", cause: "Node", output }]).slice(1),
    ...run([
      { type: "Cancel", reason: "stop" },
      { type: "KeepOutput", output },
    ]).slice(1),
  ];
}

describe("job and execution events: stored as they are read", () => {
  it("covers every type, each with a version", () => {
    expect(new Set(jobEvents().map((e) => e.type))).toEqual(new Set(JOB_EVENT_TYPES));
    expect(new Set(executionEvents().map((e) => e.type))).toEqual(new Set(EXECUTION_EVENT_TYPES));
    expect(Object.keys(JOB_EVENT_VERSIONS).sort()).toEqual([...JOB_EVENT_TYPES].sort());
    expect(Object.keys(EXECUTION_EVENT_VERSIONS).sort()).toEqual([...EXECUTION_EVENT_TYPES].sort());
  });

  it("has the schema fast path for every type", () => {
    for (const schema of [...Object.values(JOB_EVENT_SCHEMAS), ...Object.values(EXECUTION_EVENT_SCHEMAS)])
      expect(schemaFastPath(schema)).toBeDefined();
  });

  it("encodes what the deciders decide, as Effect alone would, and decodes it back unchanged", () => {
    for (const event of jobEvents()) {
      const encoded = encodeJobEvent(event, metadata, "id-1");
      expect(encoded, event.type).toEqual(encodeJobEventBySchema(event, metadata, "id-1"));
      expect(decodeJobEvent(asRecorded(encoded, jobStream(JOB)))).toEqual(JSON.parse(JSON.stringify(event)));
    }
    for (const event of executionEvents()) {
      const encoded = encodeExecutionEvent(event, metadata, "id-1");
      expect(encoded, event.type).toEqual(encodeExecutionEventBySchema(event, metadata, "id-1"));
      expect(decodeExecutionEvent(asRecorded(encoded, executionStream(EXEC)))).toEqual(
        JSON.parse(JSON.stringify(event)),
      );
    }
  });

  it("reads an ExecutionStarted stored before it could hold Details, and one with them", () => {
    const stream = executionStream(EXEC);
    const stored = {
      id: "id-old",
      type: "ExecutionStarted",
      data: { ExecutionID: EXEC },
      metadata: { ...metadata, schemaVersion: 1 },
    };
    const old = asRecorded(stored as NewEvent, stream);
    expect(decodeExecutionEvent(old)).toEqual({ type: "ExecutionStarted", data: { ExecutionID: EXEC } });
    const data = { ExecutionID: EXEC, Details: { "HostConfig.PidsLimit": "64" } };
    const withDetails = encodeExecutionEvent({ type: "ExecutionStarted", data }, metadata, "id");
    expect(decodeExecutionEvent(asRecorded(withDetails, stream)).data).toEqual(data);
  });

  it("refuses to store what its own schema rejects", () => {
    expect(() =>
      encodeJobEvent(
        { type: "JobQueued", data: { JobID: JOB, Previous: "Stopped" as never, Reason: "x" } },
        metadata,
        "id",
      ),
    ).toThrow(InvalidEventError);
    expect(() =>
      encodeExecutionEvent({ type: "ExecutionStarted", data: { ExecutionID: 7 as never } }, metadata, "id"),
    ).toThrow(/invalid ExecutionStarted \(data\)/);
  });

  it("calls a stored event of an unknown type or version, or with bad data, corrupt", () => {
    const good = encodeJobEvent({ type: "JobStarted", data: { JobID: JOB, Previous: "Pending" } }, metadata, "id");
    const stream = jobStream(JOB);
    expect(() => decodeJobEvent(asRecorded({ ...good, type: "JobExploded" }, stream))).toThrow(CorruptEventError);
    expect(() =>
      decodeJobEvent(asRecorded({ ...good, metadata: { ...good.metadata, schemaVersion: 9 } }, stream)),
    ).toThrow(/JobStarted schema version 9 is not known/);
    expect(() => decodeJobEvent(asRecorded({ ...good, data: { JobID: JOB, Previous: "Nowhere" } }, stream))).toThrow(
      CorruptEventError,
    );
  });

  it("names streams job-<id> and execution-<id>", () => {
    expect(jobStream(JOB)).toBe(`job-${JOB}`);
    expect(executionStream(EXEC)).toBe(`execution-${EXEC}`);
  });
});
