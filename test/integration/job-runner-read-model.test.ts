import { afterEach, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { isTransientFailure } from "../../src/workflows/transient-failure.ts";
import { PLACEMENT } from "../../src/workflows/jobs/job-flow.ts";
import {
  executionsCreated,
  startJobRunner,
  storeWithNode,
  type JobRunnerHarness,
} from "../support/job-runner-harness.ts";

/**
 * JobRunner reads a job's executions and the capacity they hold from the job read model alone, on real parts (a
 * SQLite store, job and execution actors, a processor host's job-views lane): before it evaluates a job, the read
 * model has folded the step's cause and everything the runner appended, however far behind it starts.
 */
const submitter = commandContext({ type: "operator", id: "alice" });
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An ops job whose one execution takes 3 of a node's 4 CPUs: a node holds one at a time. */
const opsJob = {
  Type: "ops",
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1" } },
      Resources: { CPU: "3", Memory: "32Mb" },
    },
  ],
};

/** The jobs workflow's step for a job's submission, as its host hands it over. */
const placeSubmitted = (o: JobRunnerHarness, jobId: string, position: number | undefined) =>
  o.step(PLACEMENT, "PlaceJob", jobId, position, "the job was submitted");

describe("JobRunner over the job read model", () => {
  it("after a restart, places nothing on capacity an execution of the last run holds, with its read model behind", async () => {
    const { store, clock } = await storeWithNode(cleanups, "shoal-runner-views-", "2026-11-29T02:00:00Z");

    const first = await startJobRunner(store, clock, cleanups);
    const a = await first.control.submit(opsJob, submitter);
    await placeSubmitted(first, a.jobId, a.position);
    const placed = await executionsCreated(store, a.jobId);
    expect(placed.map((e) => e.NodeID)).toEqual(["n1"]);
    await first.stop();

    // The next run's job read model starts from the beginning of the store and is held back: its placement step for
    // a job submitted since waits for it, rather than counting n1 free.
    const second = await startJobRunner(store, clock, cleanups, { holdFold: () => true });
    const b = await second.control.submit(opsJob, submitter);
    let done = false;
    const step = placeSubmitted(second, b.jobId, b.position).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(done).toBe(false);
    expect(await executionsCreated(store, b.jobId)).toEqual([]);
    second.openFold();
    await step;
    expect(second.folded).toContain(b.position);
    expect(await executionsCreated(store, b.jobId)).toEqual([]);
    expect(second.jobViews.byNode.underWayOn("n1").map((e) => e.executionId)).toEqual(placed.map((e) => e.ExecutionID));
  });

  it("whose read model does not catch up in time, tries the step again later and does not fail the job", async () => {
    const { store, clock } = await storeWithNode(cleanups, "shoal-runner-views-", "2026-11-29T02:00:00Z");
    const runner = await startJobRunner(store, clock, cleanups, { holdFold: () => true });
    const { jobId, position } = await runner.control.submit(opsJob, submitter);
    const failed = placeSubmitted(runner, jobId, position).then(
      () => undefined,
      (err: unknown) => err,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await clock.advance(10_000);
    const err = await failed;
    expect(err).toMatchObject({ kind: "Unavailable" });
    expect(String((err as Error).message)).toContain("job read model");
    expect(isTransientFailure(err)).toBe(true);
    expect((await runner.control.jobs.get(jobId)).state.state).toBe("Pending");
    expect(await executionsCreated(store, jobId)).toEqual([]);
  });
});
