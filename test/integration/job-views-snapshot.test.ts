import { randomUUID } from "node:crypto";
import { writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { executionIdOf } from "../../machines/job/job-id.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobControl } from "../../src/actors/job-control.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { JobViews } from "../../src/projections/jobs/job-views.ts";
import {
  jobViewsSnapshotPath,
  readJobViewsSnapshot,
  writeJobViewsSnapshot,
} from "../../src/snapshots/job-views-snapshot.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";

/** The job read model's snapshot over a real SQLite file: a restart starts from it, and never from a wrong one. */

const operator = commandContext({ type: "operator", id: "alice" });
const spec = (labels: Record<string, string>) => ({
  Type: "batch",
  Labels: labels,
  Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } }],
});
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function storeWithJobs(dir = tempDir()) {
  const clock = new ManualClock();
  const store = new SqliteEventStore(join(dir, "shoal.db"));
  const deadlines = new DeadlineScheduler(clock);
  const control = new JobControl({ store, clock, logger: silentLogger, deadlines, defaults: BACALHAU_JOB_DEFAULTS });
  cleanups.push(
    () => store.close(),
    () => deadlines.stop(),
    () => control.close(),
  );
  const jobs: string[] = [];
  for (let i = 0; i < 3; i++) {
    jobs.push((await control.submit(spec({ i: String(i) }), operator)).jobId);
    await clock.advance(1000);
  }
  const executions: string[] = [];
  for (const jobId of jobs.slice(0, 2)) {
    for (let n = 0; n < 2; n++) {
      const id = executionIdOf(randomUUID());
      executions.push(id);
      const resources = { CPU: 0.5, Memory: 1, Disk: 0, GPU: 0 };
      await control.executions.execute(
        id,
        {
          type: "Create",
          jobId,
          namespace: "default",
          nodeId: "n1",
          jobType: "batch",
          jobVersion: 1,
          partitionIndex: n,
          resources,
          executionTimeout: 0,
          timeoutBuffer: 0,
        },
        operator,
      );
    }
  }
  await control.stop(jobs[2]!, "enough", operator);
  return { dir, store, control, jobs, executions, clock };
}

const folded = async (store: SqliteEventStore, from = 0, views = new JobViews()) => {
  for (const e of await store.readAll({ after: from })) views.handle(e);
  return views;
};
const picture = (views: JobViews, jobs: string[]) =>
  jobs.map((id) => ({
    job: views.job(id),
    executions: views.executionsOfJob(id).map((e) => JSON.parse(JSON.stringify(e)) as unknown),
  }));
const listed = (views: JobViews) =>
  views.index
    .query({ order: "created_at", reverse: false, selector: { requirements: [], text: "" }, limit: 100 }, (id) =>
      views.job(id),
    )
    .jobs.map((j) => j.jobId);

describe("job-views snapshot", () => {
  it("round-trips: views seeded from it, plus the events after it, equal a full fold", async () => {
    const { dir, store, control, jobs } = await storeWithJobs();
    const path = jobViewsSnapshotPath(dir);
    const before = await folded(store);
    await writeJobViewsSnapshot(path, before.snapshot()!);
    // Events after the snapshot: folded on top of it.
    await control.jobs.execute(jobs[0]!, { type: "Run" }, operator);
    const loaded = await readJobViewsSnapshot(path, store);
    expect("snapshot" in loaded ? "ok" : loaded.reason).toBe("ok");
    if (!("snapshot" in loaded)) return;
    const seeded = new JobViews();
    seeded.seed(loaded.snapshot);
    await folded(store, loaded.snapshot.anchor.position, seeded);
    const full = await folded(store);
    expect(picture(seeded, jobs)).toEqual(picture(full, jobs));
    expect(listed(seeded)).toEqual(jobs);
    expect(seeded.job(jobs[0]!)?.state).toBe("Running");
  });

  it("is refused when it is of another store, torn or edited: the store is folded from its start", async () => {
    const a = await storeWithJobs();
    const b = await storeWithJobs();
    const path = jobViewsSnapshotPath(a.dir);
    await writeJobViewsSnapshot(path, (await folded(a.store)).snapshot()!);
    expect(await readJobViewsSnapshot(path, b.store)).toEqual({ reason: expect.stringContaining("another store") });
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.replace('"enough"', '"plenty"'));
    expect(await readJobViewsSnapshot(path, a.store)).toEqual({ reason: expect.stringContaining("checksum") });
    writeFileSync(path, text.slice(0, text.length / 2));
    expect(await readJobViewsSnapshot(path, a.store)).toEqual({ reason: expect.stringContaining("corrupt") });
    expect(await readJobViewsSnapshot(join(tempDir(), "none.json"), a.store)).toEqual({ reason: "no snapshot yet" });
  });
});
