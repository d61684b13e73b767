import { describe, expect, it } from "vitest";
import { fold } from "../../../../machines/decider.ts";
import type { JobCommand } from "../../../../machines/job/job-commands.ts";
import { jobDecider } from "../../../../machines/job/job-decider.ts";
import { jobDeadlines } from "../../../../machines/job/job-deadlines.ts";
import { BACALHAU_JOB_DEFAULTS } from "../../../../machines/job/job-defaults.ts";
import type { JobSpec } from "../../../../machines/job/job-spec.ts";
import { jobSpecDiff } from "../../../../machines/job/job-spec-diff.ts";
import { jobAtVersion, jobVersions } from "../../../../machines/job/job-versions.ts";
import { validateJobSubmission } from "../../../../src/actors/job-submission/validate-job-submission.ts";
import type { JobEvent } from "../../../../src/events/catalog/job-events.ts";
import { SPEC_NOW, deciderSpec } from "../../../support/decider-spec.ts";

const ID = "j-00000000-0000-4000-8000-000000000001";
const given = deciderSpec(jobDecider, ID);
const raw = (extra: Record<string, unknown> = {}, image = "busybox") => ({
  Name: "nightly",
  Type: "batch",
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: image } }, Timeouts: { TotalTimeout: 600 } }],
  ...extra,
});
const validated = (input: unknown) => validateJobSubmission(input, { jobId: ID, defaults: BACALHAU_JOB_DEFAULTS });
function specOf(input: unknown): JobSpec {
  const r = validated(input);
  if (!r.ok) throw new Error("fixture is invalid");
  return r.spec;
}
const put = (input: unknown, force = false): JobCommand => ({ type: "Put", submission: validated(input), force });
const putWith = (token: string, input: unknown, force = false): JobCommand => ({
  type: "Put",
  submission: validated(input),
  force,
  token,
});
const rerun = (version = 0, reason = ""): JobCommand => ({ type: "Rerun", version, reason });

const submitted: JobEvent = {
  type: "JobSubmitted",
  data: { JobID: ID, Job: specOf(raw()), Version: 1, Warnings: [] },
};
const started: JobEvent = { type: "JobStarted", data: { JobID: ID, Previous: "Pending" } };
const queued: JobEvent = { type: "JobQueued", data: { JobID: ID, Previous: "Pending", Reason: "no nodes" } };
const completed: JobEvent = { type: "JobCompleted", data: { JobID: ID, Previous: "Running" } };
const failed: JobEvent = {
  type: "JobFailed",
  data: { JobID: ID, Previous: "Running", Cause: "Scheduling", Message: "it failed" },
};
const stopped: JobEvent = { type: "JobStopped", data: { JobID: ID, Previous: "Running", Reason: "enough" } };
const IMAGE_DIFF = '- Tasks[0].Engine.Params.Image: "busybox"\n+ Tasks[0].Engine.Params.Image: "alpine"';
const updated = (Previous: "Completed" | "Running" = "Completed"): JobEvent => ({
  type: "JobUpdated",
  data: {
    JobID: ID,
    Previous,
    Version: 2,
    Job: specOf(raw({}, "alpine")),
    Diff: IMAGE_DIFF,
    Forced: false,
    Warnings: [],
  },
});

/** Every state a job can be in, by the events that bring it there. */
const IN_STATE = {
  Pending: [submitted],
  Queued: [submitted, queued],
  Running: [submitted, started],
  Completed: [submitted, started, completed],
  Failed: [submitted, started, failed],
  Stopped: [submitted, started, stopped],
} as const;

describe("submitting a job under a name it already has (Bacalhau's update)", () => {
  it("submits the job when none has the id yet", () => {
    given()
      .when(put(raw()))
      .then([{ type: "JobSubmitted", data: { JobID: ID, Job: specOf(raw()), Version: 1, Warnings: [] } }]);
  });

  it("makes the new spec the next version, with what changed; the job is Pending again, the last version kept", () => {
    given(IN_STATE.Completed)
      .when(put(raw({}, "alpine")))
      .then([updated()], "job updated");
    const state = given([...IN_STATE.Completed, updated()]).state;
    expect(state).toMatchObject({
      state: "Pending",
      version: 2,
      revision: 4,
      message: "Job update requested by user",
      spec: specOf(raw({}, "alpine")),
      createTime: SPEC_NOW,
    });
    expect(state.versions).toEqual([
      {
        version: 1,
        spec: specOf(raw()),
        state: "Completed",
        message: "",
        revision: 3,
        modifyTime: SPEC_NOW,
        warnings: [],
      },
    ]);
  });

  it("updates a job in any state, ended ones included", () => {
    for (const [name, history] of Object.entries(IN_STATE)) {
      const decision = given(history).when(put(raw({ Count: 2 }))).decision;
      expect(decision, name).toMatchObject({
        ok: true,
        events: [{ type: "JobUpdated", data: { Previous: name, Version: 2, Diff: "- Count: 1\n+ Count: 2" } }],
      });
    }
  });

  it("refuses an unchanged spec with Bacalhau's message and hint, and takes it when forced", () => {
    given(IN_STATE.Running)
      .when(put(raw()))
      .thenThrows({
        code: "Invalid",
        message: `no changes detected for new job spec. Job Name: 'nightly', Job Id: '${ID}'`,
        problems: [],
        hint: "Use the --force flag to override this warning",
      });
    given(IN_STATE.Running)
      .when(put(raw(), true))
      .thenMatches([{ type: "JobUpdated", data: { Previous: "Running", Version: 2, Diff: "", Forced: true } }]);
  });

  it("counts no Meta key Bacalhau reserves as a change", () => {
    given(IN_STATE.Running)
      .when(put(raw({ Meta: { "bacalhau.org/client.id": "abc" } })))
      .thenThrows({ code: "Invalid", problems: [] });
  });

  it("refuses an invalid spec, another Type, another name, changing nothing", () => {
    given(IN_STATE.Completed)
      .when(put(raw({ Count: -1 })))
      .thenThrows({ code: "Invalid", problems: [{ path: "Count", message: "job count must be >= 0" }] });
    given(IN_STATE.Completed)
      .when(put(raw({ Type: "ops" })))
      .thenThrows({
        code: "Invalid",
        message: "a job's type cannot change: nightly is a batch job; submit the ops job under another name",
      });
    given(IN_STATE.Completed)
      .when(put(raw({ Name: "weekly" })))
      .thenThrows({ code: "Conflict", message: "cannot change job name or namespace during update" });
  });
});

describe("rerunning a job", () => {
  it("runs its current spec again as its next version, Pending, with the user's reason or Bacalhau's", () => {
    given(IN_STATE.Completed)
      .when(rerun())
      .then(
        [
          {
            type: "JobRerun",
            data: {
              JobID: ID,
              Previous: "Completed",
              Version: 2,
              FromVersion: 1,
              Job: specOf(raw()),
              Reason: "job rerun",
            },
          },
        ],
        "job rerun",
      );
    given(IN_STATE.Failed)
      .when(rerun(1, "flaky network"))
      .thenMatches([{ type: "JobRerun", data: { Previous: "Failed", Reason: "flaky network" } }]);
    const again: JobEvent = {
      type: "JobRerun",
      data: { JobID: ID, Previous: "Failed", Version: 2, FromVersion: 1, Job: specOf(raw()), Reason: "job rerun" },
    };
    const state = given([...IN_STATE.Failed, again]).state;
    expect(state).toMatchObject({ state: "Pending", version: 2, message: "job rerun", revision: 4 });
    expect(state.versions.map((v) => [v.version, v.state])).toEqual([[1, "Failed"]]);
  });

  it("reruns an older version's spec as the newest version", () => {
    given([...IN_STATE.Completed, updated(), started, completed])
      .when(rerun(1))
      .thenMatches([
        { type: "JobRerun", data: { Previous: "Completed", Version: 3, FromVersion: 1, Job: specOf(raw()) } },
      ]);
  });

  it("refuses a job Pending or Queued as Bacalhau does, and a version the job does not have", () => {
    for (const history of [IN_STATE.Pending, IN_STATE.Queued]) {
      const state = history === IN_STATE.Pending ? "Pending" : "Queued";
      given(history)
        .when(rerun())
        .thenThrows({
          code: "Conflict",
          message: `cannot rerun job in state ${state}`,
          hint: "try to use the job run command instead of the job rerun command",
        });
    }
    for (const history of [IN_STATE.Running, IN_STATE.Stopped])
      given(history)
        .when(rerun())
        .thenMatches([{ type: "JobRerun" }]);
    given(IN_STATE.Completed)
      .when(rerun(7))
      .thenThrows({ code: "NotFound", message: `job version 7 not found for job ${ID}` });
    given()
      .when(rerun())
      .thenThrows({ code: "NotFound", message: `job not found: ${ID}` });
  });

  it("judges an older version by the state it was in when the next one replaced it", () => {
    // Version 1 was Pending when updated: not rerunnable, while the current version (Completed) is.
    const history = [submitted, { ...updated(), data: { ...updated().data, Previous: "Pending" } } as JobEvent];
    given([...history, started, completed])
      .when(rerun(1))
      .thenThrows({ code: "Conflict", message: "cannot rerun job in state Pending" });
    given([...history, started, completed])
      .when(rerun(2))
      .thenMatches([{ type: "JobRerun" }]);
  });
});

describe("a job's versions", () => {
  it("are each the job as it stood when replaced, the current one last", () => {
    const state = given([...IN_STATE.Completed, updated()]).state;
    expect(jobVersions(state).map((v) => [v.version, v.state, v.spec?.Tasks[0]?.Engine.Params.Image])).toEqual([
      [1, "Completed", "busybox"],
      [2, "Pending", "alpine"],
    ]);
    expect(jobAtVersion(state, 0)).toBe(state);
    expect(jobAtVersion(state, 2)).toBe(state);
    expect(jobAtVersion(state, 1)).toMatchObject({ version: 1, state: "Completed", revision: 3 });
    expect(jobAtVersion(state, 3)).toBeUndefined();
  });

  it("count their timeouts from their own start, not the job's creation", () => {
    const at = (ms: number) => new Date(SPEC_NOW + ms).toISOString();
    const hours = 3_600_000;
    const state = fold(jobDecider, ID, [
      { event: submitted, time: at(0) },
      { event: started, time: at(1000) },
      { event: completed, time: at(2000) },
      { event: { ...updated(), data: { ...updated().data } }, time: at(2 * hours) },
    ]);
    expect(state.createTime).toBe(SPEC_NOW);
    expect(jobDeadlines(state)).toEqual([
      { name: "total-timeout", at: SPEC_NOW + 2 * hours + 600_000, command: { type: "TimeOutJob" } },
    ]);
    // Not yet past its version's TotalTimeout: nothing happens.
    given([...IN_STATE.Completed, updated()])
      .when({ type: "TimeOutJob" }, SPEC_NOW + 599_000)
      .thenNothingHappened();
  });
});

describe("what differs between two specs", () => {
  it("names each changed value by its path, old then new; nothing when equal", () => {
    const before = specOf(raw({ Labels: { team: "a" }, Meta: { "owner/x": "1" } }));
    const after = specOf(raw({ Labels: { team: "b", tier: "1" }, Meta: { "owner/x": "1" } }, "alpine"));
    expect(jobSpecDiff(before, after)).toBe(
      [
        '- Labels.team: "a"',
        '+ Labels.team: "b"',
        '+ Labels.tier: "1"',
        '- Tasks[0].Engine.Params.Image: "busybox"',
        '+ Tasks[0].Engine.Params.Image: "alpine"',
      ].join("\n"),
    );
    expect(jobSpecDiff(before, before)).toBe("");
    expect(jobSpecDiff(specOf(raw({ Meta: { "a b": "1" } })), specOf(raw()))).toBe('- Meta["a b"]: "1"');
  });
});

describe("an IdempotencyToken on a named job: one submission", () => {
  const T1 = "t-1";
  const T2 = "t-2";
  const withToken = (e: JobEvent, token: string): JobEvent =>
    ({ ...e, data: { ...e.data, IdempotencyToken: token } }) as JobEvent;
  const submittedT1 = withToken(submitted, T1);
  const updatedT2 = withToken(updated(), T2);

  it("records the token on the job's first version and on an update", () => {
    given().when(putWith(T1, raw())).then([submittedT1]);
    given(IN_STATE.Completed)
      .when(putWith(T2, raw({}, "alpine")))
      .then([updatedT2], "job updated");
    expect(given([submittedT1, started, completed, updatedT2]).state.tokens).toEqual({ [T1]: 1, [T2]: 2 });
  });

  it("answers a retry with the same spec by storing nothing, even after a later version", () => {
    given([submittedT1]).when(putWith(T1, raw())).thenNothingHappened();
    given([submittedT1, started, completed, updatedT2]).when(putWith(T1, raw())).thenNothingHappened();
    given([submittedT1, started, completed, updatedT2])
      .when(putWith(T2, raw({}, "alpine")))
      .thenNothingHappened();
  });

  it("refuses the token with another spec as a Conflict, forced or not", () => {
    given([submittedT1, started, completed, updatedT2])
      .when(putWith(T1, raw({}, "debian")))
      .thenThrows({ code: "Conflict", message: `IdempotencyToken "t-1" was used for another job (${ID})` });
    given([submittedT1])
      .when(putWith(T1, raw({}, "alpine"), true))
      .thenThrows({ code: "Conflict" });
  });

  it("takes a new token as a new submission: an unchanged spec is refused unless forced", () => {
    given([submittedT1, started, completed])
      .when(putWith(T2, raw()))
      .thenThrows({ code: "Invalid", hint: "Use the --force flag to override this warning" });
    given([submittedT1, started, completed])
      .when(putWith(T2, raw(), true))
      .thenMatches([{ type: "JobUpdated", data: { Version: 2, Forced: true, IdempotencyToken: T2 } }]);
  });
});
