import { describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../../../machines/job/job-defaults.ts";
import type { JobCommand } from "../../../../machines/job/job-commands.ts";
import { jobDecider } from "../../../../machines/job/job-decider.ts";
import { jobChart, jobChartIndex, jobTransitions } from "../../../../machines/job/job-chart.ts";
import { heldMessage } from "../../../../machines/job/evolve-job.ts";
import type { JobSpec } from "../../../../machines/job/job-spec.ts";
import { validateJobSubmission } from "../../../../src/actors/job-submission/validate-job-submission.ts";
import type { JobEvent } from "../../../../src/events/catalog/job-events.ts";
import { chartStep } from "../../../support/chart-agreement.ts";
import { SPEC_NOW, SPEC_TIME, deciderSpec } from "../../../support/decider-spec.ts";

const ID = "j-00000000-0000-4000-8000-000000000001";
const given = deciderSpec(jobDecider, ID);
const defaults = BACALHAU_JOB_DEFAULTS;
const raw = (extra: Record<string, unknown> = {}, timeouts: Record<string, number> = {}) => ({
  Type: "batch",
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } }, Timeouts: timeouts }],
  ...extra,
});
function specOf(input: unknown): JobSpec {
  const r = validateJobSubmission(input, { jobId: ID, defaults });
  if (!r.ok) throw new Error("fixture is invalid");
  return r.spec;
}
/** The host validates a submission before the decider sees it. */
const submit = (input: unknown): JobCommand => ({
  type: "Submit",
  submission: validateJobSubmission(input, { jobId: ID, defaults }),
});
const submitted = (input: unknown = raw()): JobEvent => ({
  type: "JobSubmitted",
  data: { JobID: ID, Job: specOf(input), Version: 1, Warnings: [] },
});
const queuing = submitted(raw({}, { QueueTimeout: 600, TotalTimeout: 3600 }));
const queued = (reason = "no nodes", Previous: "Pending" | "Running" = "Pending"): JobEvent => ({
  type: "JobQueued",
  data: { JobID: ID, Previous, Reason: reason },
});
const started = (Previous: "Pending" | "Queued" = "Pending"): JobEvent => ({
  type: "JobStarted",
  data: { JobID: ID, Previous },
});
const completed: JobEvent = { type: "JobCompleted", data: { JobID: ID, Previous: "Running" } };
const failed: JobEvent = {
  type: "JobFailed",
  data: {
    JobID: ID,
    Previous: "Running",
    Cause: "Scheduling",
    Message: "Job failed because one or more executions failed",
  },
};
const stopped: JobEvent = { type: "JobStopped", data: { JobID: ID, Previous: "Running", Reason: "enough" } };
const NOT_ENOUGH = "not enough nodes to run job. requested: 1, available: 0, suitable: 0.";

describe("submitting a job", () => {
  it("stores the validated spec with Bacalhau's defaults; the job is Pending at revision 1, version 1", () => {
    const spec = given().when(submit(raw({ ID: "mine" })));
    spec.then(
      [
        {
          type: "JobSubmitted",
          data: {
            JobID: ID,
            Job: specOf(raw()),
            Version: 1,
            Warnings: ["job ID is ignored when submitting a batch job"],
          },
        },
      ],
      "job submitted",
    );
    const state = given([submitted()]).state;
    expect(state).toMatchObject({
      state: "Pending",
      revision: 1,
      version: 1,
      createTime: SPEC_NOW,
      modifyTime: SPEC_NOW,
      message: "",
    });
  });

  it("refuses an invalid spec with every problem, storing nothing", () => {
    given()
      .when(submit({ Type: "batch", Count: -1, Tasks: [{ Name: "main", Engine: { Type: "docker", Params: {} } }] }))
      .thenThrows({
        code: "Invalid",
        message:
          "invalid job: Count: job count must be >= 0; Tasks[0].Engine.Params.Image: missing image: 'Image' cannot be empty",
        problems: [
          { path: "Count", message: "job count must be >= 0" },
          { path: "Tasks[0].Engine.Params.Image", message: "missing image: 'Image' cannot be empty" },
        ],
      });
  });

  it("refuses a second submission of the same id, and an id that is not j-<uuid>", () => {
    given([submitted()])
      .when(submit(raw()))
      .thenThrows({ code: "Conflict", message: `job ${ID} already exists` });
    deciderSpec(jobDecider, "j-nope")()
      .when(submit(raw()))
      .thenThrows({ code: "Conflict", message: 'a job\'s id is j-<uuid>, not "j-nope"' });
  });

  it("treats every other command on an unknown job as not found", () => {
    for (const command of [
      { type: "Queue", reason: "x" },
      { type: "Run" },
      { type: "Complete" },
      { type: "Fail", reason: "x" },
      { type: "Stop", reason: "" },
    ] as JobCommand[]) {
      given()
        .when(command)
        .thenThrows({ code: "NotFound", message: `job not found: ${ID}` });
    }
  });
});

describe("queueing", () => {
  it("fails a job with the scheduler's reason at once when it has no QueueTimeout (Bacalhau's default)", () => {
    given([submitted()])
      .when({ type: "Queue", reason: NOT_ENOUGH })
      .then([
        { type: "JobFailed", data: { JobID: ID, Previous: "Pending", Cause: "Scheduling", Message: NOT_ENOUGH } },
      ]);
  });

  it("queues a job with a QueueTimeout, with Bacalhau's message; queueing it again changes nothing", () => {
    given([queuing])
      .when({ type: "Queue", reason: NOT_ENOUGH })
      .then([queued(NOT_ENOUGH)]);
    expect(given([queuing, queued(NOT_ENOUGH)]).state).toMatchObject({
      state: "Queued",
      message: `Job queued. ${NOT_ENOUGH}`,
      revision: 2,
    });
    given([queuing, queued()]).when({ type: "Queue", reason: "other" }).thenNothingHappened();
  });

  it("queues a queued job again when the number of executions it lacks changes, and only then", () => {
    const lacking = (wanted: number, Previous: "Pending" | "Queued" = "Pending"): JobEvent => ({
      type: "JobQueued",
      data: { JobID: ID, Previous, Reason: `requested: ${wanted}`, Wanted: wanted },
    });
    given([queuing])
      .when({ type: "Queue", reason: "requested: 1", wanted: 1 })
      .then([lacking(1)]);
    given([queuing, lacking(1)])
      .when({ type: "Queue", reason: "requested: 2", wanted: 2 })
      .then([lacking(2, "Queued")]);
    given([queuing, lacking(1)])
      .when({ type: "Queue", reason: "requested: 1, other nodes", wanted: 1 })
      .thenNothingHappened();
    expect(given([queuing, lacking(1), lacking(2, "Queued")]).state).toMatchObject({
      state: "Queued",
      message: "Job queued. requested: 2",
      queueReason: "requested: 2",
      queueWanted: 2,
      revision: 3,
    });
    // Queued before the count was recorded: the first count is news once.
    given([queuing, queued()])
      .when({ type: "Queue", reason: "requested: 2", wanted: 2 })
      .then([lacking(2, "Queued")]);
  });

  it("leaves a daemon job as it is: it waits for matching nodes, without a queue timeout", () => {
    const spec = given([submitted(raw({ Type: "daemon" }))]).when(
      { type: "Queue", reason: NOT_ENOUGH },
      SPEC_NOW + 86_400_000,
    );
    spec.thenNothingHappened();
    expect(spec.decision).toMatchObject({ note: "a daemon job waits for matching nodes" });
  });

  it("queues a Running job again (its executions failed and no node is left) while its QueueTimeout lasts", () => {
    given([queuing, started()])
      .when({ type: "Queue", reason: "all busy" })
      .then([queued("all busy", "Running")]);
  });

  it("fails a job queued past its QueueTimeout, counted from its creation", () => {
    const past = SPEC_NOW + 600_000;
    given([queuing, queued()])
      .when({ type: "Queue", reason: NOT_ENOUGH }, past)
      .then([{ type: "JobFailed", data: { JobID: ID, Previous: "Queued", Cause: "Scheduling", Message: NOT_ENOUGH } }]);
    given([queuing])
      .when({ type: "Queue", reason: NOT_ENOUGH }, past + 1)
      .thenMatches([{ type: "JobFailed" }]);
  });

  it("asks for a queue-timeout deadline while Queued, which fails the job with the last reason", () => {
    const state = given([queuing, queued(NOT_ENOUGH)]).state;
    expect(jobDecider.deadlines?.(state)).toEqual([
      { name: "queue-timeout", at: SPEC_NOW + 600_000, command: { type: "TimeOutQueue" } },
      { name: "total-timeout", at: SPEC_NOW + 3_600_000, command: { type: "TimeOutJob" } },
    ]);
    given([queuing, queued(NOT_ENOUGH)])
      .when({ type: "TimeOutQueue" }, SPEC_NOW + 600_000)
      .then([
        { type: "JobFailed", data: { JobID: ID, Previous: "Queued", Cause: "QueueTimeout", Message: NOT_ENOUGH } },
      ]);
    given([queuing, queued("")])
      .when({ type: "TimeOutQueue" }, SPEC_NOW + 600_000)
      .thenMatches([{ data: { Message: "job could not be placed within its queue timeout of 10m0s" } }]);
  });

  it("ignores a queue-timeout that comes early or finds the job no longer queued", () => {
    given([queuing, queued()])
      .when({ type: "TimeOutQueue" }, SPEC_NOW + 599_999)
      .thenNothingHappened();
    given([queuing, queued(), started("Queued")])
      .when({ type: "TimeOutQueue" }, SPEC_NOW + 600_000)
      .thenNothingHappened();
    given([queuing, queued(), stopped])
      .when({ type: "TimeOutQueue" }, SPEC_NOW + 600_000)
      .thenNothingHappened();
    expect(jobDecider.deadlines?.(given([queuing, started()]).state)).toEqual([
      { name: "total-timeout", at: SPEC_NOW + 3_600_000, command: { type: "TimeOutJob" } },
    ]);
  });
});

describe("running, completing, failing", () => {
  it("runs a Pending or Queued job once an execution is to run; again changes nothing", () => {
    given([submitted()]).when({ type: "Run" }).then([started()]);
    given([queuing, queued()])
      .when({ type: "Run" })
      .then([started("Queued")]);
    given([submitted(), started()]).when({ type: "Run" }).thenNothingHappened();
    expect(given([submitted(), started()]).state).toMatchObject({ state: "Running", message: "", revision: 2 });
  });

  it("completes a batch or ops job; completing again changes nothing", () => {
    given([submitted(), started()]).when({ type: "Complete" }).then([completed]);
    given([submitted(raw({ Type: "ops" }))])
      .when({ type: "Complete" })
      .then([{ type: "JobCompleted", data: { JobID: ID, Previous: "Pending" } }]);
    given([submitted(), started(), completed]).when({ type: "Complete" }).thenNothingHappened();
    expect(given([submitted(), started(), completed]).state).toMatchObject({ state: "Completed", revision: 3 });
  });

  it("refuses to complete a service or daemon job: they run until stopped", () => {
    for (const Type of ["service", "daemon"]) {
      given([submitted(raw({ Type })), started()])
        .when({ type: "Complete" })
        .thenThrows({
          code: "Conflict",
          message: `job ${ID} is a ${Type} job: it runs until stopped and never completes`,
        });
    }
  });

  it("fails a live job with the reason as its state message; failing again changes nothing", () => {
    given([submitted(), started()])
      .when({ type: "Fail", reason: "Job failed because one or more executions failed" })
      .then([failed]);
    expect(given([submitted(), started(), failed]).state).toMatchObject({
      state: "Failed",
      message: "Job failed because one or more executions failed",
    });
    given([submitted(), started(), failed]).when({ type: "Fail", reason: "again" }).thenNothingHappened();
  });

  it("fails a batch job past its TotalTimeout, with Bacalhau's message", () => {
    const timed = submitted(raw({}, { TotalTimeout: 1800 }));
    expect(jobDecider.deadlines?.(given([timed, started()]).state)).toEqual([
      { name: "total-timeout", at: SPEC_NOW + 1_800_000, command: { type: "TimeOutJob" } },
    ]);
    given([timed, started()])
      .when({ type: "TimeOutJob" }, SPEC_NOW + 1_800_000)
      .then([
        {
          type: "JobFailed",
          data: {
            JobID: ID,
            Previous: "Running",
            Cause: "TotalTimeout",
            Message: "Job timed out. Job took longer than 30m0s",
          },
        },
      ]);
    given([timed, started()])
      .when({ type: "TimeOutJob" }, SPEC_NOW + 1_799_999)
      .thenNothingHappened();
    given([timed, started(), completed])
      .when({ type: "TimeOutJob" }, SPEC_NOW + 1_800_000)
      .thenNothingHappened();
    expect(jobDecider.deadlines?.(given([timed, started(), completed]).state)).toEqual([]);
  });

  it("gives long-running jobs and jobs without timeouts no deadlines", () => {
    expect(jobDecider.deadlines?.(given([submitted(raw({ Type: "service" }))]).state)).toEqual([]);
    expect(jobDecider.deadlines?.(given([submitted()]).state)).toEqual([]);
    expect(jobDecider.deadlines?.(given().state)).toEqual([]);
  });
});

describe("stopping a job, as Bacalhau's DELETE does", () => {
  it("stops a Pending, Queued or Running job with the reason as its message", () => {
    given([submitted()])
      .when({ type: "Stop", reason: "oops" })
      .then([{ type: "JobStopped", data: { JobID: ID, Previous: "Pending", Reason: "oops" } }]);
    given([queuing, queued()])
      .when({ type: "Stop", reason: "" })
      .then([{ type: "JobStopped", data: { JobID: ID, Previous: "Queued", Reason: "" } }]);
    given([submitted(), started()]).when({ type: "Stop", reason: "enough" }).then([stopped]);
    expect(given([submitted(), started(), stopped]).state).toMatchObject({
      state: "Stopped",
      message: "enough",
      revision: 3,
    });
  });

  it("does nothing to a Stopped job", () => {
    given([submitted(), started(), stopped]).when({ type: "Stop", reason: "again" }).thenNothingHappened();
  });

  it("refuses to stop a Completed or Failed job", () => {
    given([submitted(), started(), completed])
      .when({ type: "Stop", reason: "" })
      .thenThrows({ code: "Conflict", message: "cannot stop job in state Completed" });
    given([submitted(), started(), failed])
      .when({ type: "Stop", reason: "" })
      .thenThrows({
        code: "Conflict",
        message: `job ${ID} is in terminal state Failed and cannot transition to Stopped`,
      });
  });
});

describe("an update waiting for room", () => {
  const spec = raw({ Type: "service", Count: 3 }, { QueueTimeout: 600 });
  const service = submitted(spec);
  const updated: JobEvent = {
    type: "JobUpdated",
    data: { JobID: ID, Previous: "Running", Version: 2, Job: specOf(spec), Diff: "", Forced: true, Warnings: [] },
  };
  const SHORT = "not enough nodes to run job. requested: 3, available: 3, suitable: 2.\n• Node n-3: node is cordoned";
  const held = (Reason = SHORT, Previous: "Pending" | "Running" = "Running"): JobEvent => ({
    type: "JobUpdateHeld",
    data: { JobID: ID, Previous, Version: 2, Reason },
  });
  const resumed: JobEvent = { type: "JobUpdateResumed", data: { JobID: ID, Previous: "Running", Version: 2 } };
  const rolling = [service, started(), updated, started()];

  it("holds the version with the scheduler's reason: the job stays Running, its message says it waits and why", () => {
    given(rolling).when({ type: "HoldUpdate", reason: SHORT }).then([held()]);
    expect(given([...rolling, held()]).state).toMatchObject({
      state: "Running",
      version: 2,
      revision: 5,
      message: heldMessage(2, SHORT),
      heldReason: SHORT,
    });
    expect(heldMessage(2, SHORT)).toContain("Version 2 waits for room");
  });

  it("records the hold again only when its reason changes, never for each evaluation", () => {
    given([...rolling, held()])
      .when({ type: "HoldUpdate", reason: SHORT })
      .thenNothingHappened();
    given([...rolling, held()])
      .when({ type: "HoldUpdate", reason: "all busy" })
      .then([held("all busy")]);
  });

  it("keeps the hold's message when the held version starts running in part, until it is resumed", () => {
    const before = [service, started(), updated, held(SHORT, "Pending")];
    expect(given([...before, started()]).state).toMatchObject({ state: "Running", message: heldMessage(2, SHORT) });
    given([...before, started()])
      .when({ type: "ResumeUpdate" })
      .then([resumed]);
    expect(given([...before, started(), resumed]).state).toMatchObject({
      state: "Running",
      message: "",
      heldReason: "",
    });
  });

  it("resumes nothing that is not held; a hold or resumption that finds the job ended does nothing", () => {
    given(rolling).when({ type: "ResumeUpdate" }).thenNothingHappened();
    given([...rolling, held(), resumed])
      .when({ type: "ResumeUpdate" })
      .thenNothingHappened();
    given([...rolling, held(), stopped])
      .when({ type: "ResumeUpdate" })
      .thenNothingHappened();
    given([...rolling, stopped])
      .when({ type: "HoldUpdate", reason: SHORT })
      .thenNothingHappened();
  });

  it("ends with a queueing, a failure, a stop or a next version, which say their own message", () => {
    const requeued = given([...rolling, held(), queued("all busy", "Running")]).state;
    expect(requeued).toMatchObject({ state: "Queued", message: "Job queued. all busy", heldReason: "" });
    expect(given([...rolling, held(), stopped]).state).toMatchObject({ message: "enough", heldReason: "" });
    const next = { ...updated, data: { ...updated.data, Version: 3 } } as JobEvent;
    expect(given([...rolling, held(), next]).state).toMatchObject({ state: "Pending", heldReason: "" });
    given([...rolling, held(), queued("all busy", "Running")])
      .when({ type: "HoldUpdate", reason: SHORT })
      .thenMatches([{ type: "JobUpdateHeld", data: { Previous: "Queued", Reason: SHORT } }]);
  });
});

describe("terminal jobs stay terminal", () => {
  it("refuses every change of a terminal job to another state", () => {
    const cases: [JobEvent, JobCommand, string][] = [
      [completed, { type: "Run" }, "Running"],
      [completed, { type: "Fail", reason: "x" }, "Failed"],
      [completed, { type: "Queue", reason: "x" }, "Queued"],
      [failed, { type: "Complete" }, "Completed"],
      [failed, { type: "Run" }, "Running"],
      [stopped, { type: "Complete" }, "Completed"],
      [stopped, { type: "Fail", reason: "x" }, "Failed"],
      [stopped, { type: "Queue", reason: "x" }, "Queued"],
    ];
    for (const [end, command, target] of cases) {
      const state = end.type === "JobCompleted" ? "Completed" : end.type === "JobFailed" ? "Failed" : "Stopped";
      given([submitted(), started(), end])
        .when(command)
        .thenThrows({
          code: "Conflict",
          message: `job ${ID} is in terminal state ${state} and cannot transition to ${target}`,
        });
    }
  });

  it("folds nothing its chart refuses: a second JobStarted on a running one", () => {
    const runningState = given([submitted(), started()]).state;
    expect(jobDecider.evolve(runningState, started(), SPEC_TIME)).toBe(runningState);
  });

  it("folds nothing onto a terminal job (a damaged history cannot revive it)", () => {
    const state = given([submitted(), started(), stopped]).state;
    expect(jobDecider.evolve(state, started("Queued"), SPEC_TIME)).toBe(state);
    expect(jobDecider.evolve(state, submitted(), SPEC_TIME)).toBe(state);
  });
});

describe("the chart and decide", () => {
  const commands: JobCommand[] = [
    submit(raw({}, { QueueTimeout: 60, TotalTimeout: 600 })),
    submit(raw({ Type: "service" }, { QueueTimeout: 60 })),
    submit({ Type: "nope" }),
    { type: "Queue", reason: "r" },
    { type: "Run" },
    { type: "Complete" },
    { type: "Fail", reason: "f" },
    { type: "Stop", reason: "s" },
    { type: "TimeOutQueue" },
    { type: "TimeOutJob" },
    { type: "HoldUpdate", reason: "h" },
    { type: "ResumeUpdate" },
  ];

  it("agree on every state a random run of commands reaches: decide emits only what the chart takes", () => {
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const seen = new Set<string>();
    for (let run = 0; run < 200; run++) {
      let state = jobDecider.initialState(ID);
      let now = SPEC_NOW;
      for (let step = 0; step < 12; step++) {
        now += Math.floor(random() * 30_000);
        const command = commands[Math.floor(random() * commands.length)]!;
        const decision = jobDecider.decide(command, state, { now });
        const value = () => jobTransitions.values[jobChartIndex(state)]!;
        // Deadlines and an update's hold never find the job wrong: at worst it moved on, and they do nothing.
        const moot = ["TimeOutQueue", "TimeOutJob", "HoldUpdate", "ResumeUpdate"].includes(command.type);
        if (moot) expect(decision.ok).toBe(true);
        if (!decision.ok) continue;
        for (const e of decision.events) {
          expect(chartStep(jobChart, value(), state, e), `${command.type} in ${String(value())}`).toBeDefined();
          state = jobDecider.evolve(state, e, new Date(now).toISOString());
        }
        expect(jobChart.resolveState({ value: value() }).status).not.toBe("error");
        seen.add(String(value()));
      }
    }
    expect([...seen].sort()).toEqual(["absent", "completed", "failed", "pending", "queued", "running", "stopped"]);
  });
});
