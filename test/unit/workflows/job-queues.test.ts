import { describe, expect, it } from "vitest";
import { JobQueues } from "../../../src/workflows/jobs/job-queues.ts";

/** A piece of work the test ends: it records when it started. */
function held(log: string[], name: string) {
  let end = () => {};
  let fail = (_err: Error) => {};
  const work = () =>
    new Promise<void>((resolve, reject) => {
      log.push(name);
      end = resolve;
      fail = reject;
    });
  return { work, end: () => end(), fail: (err: Error) => fail(err) };
}

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

describe("work per job", () => {
  it("runs a job's work in order, other jobs' meanwhile, and forgets a job once idle", async () => {
    const queues = new JobQueues();
    const log: string[] = [];
    const a1 = held(log, "a1");
    const a2 = held(log, "a2");
    const b1 = held(log, "b1");
    const pa1 = queues.run("a", a1.work);
    const pa2 = queues.run("a", a2.work);
    const pb1 = queues.run("b", b1.work);
    await turns();
    expect(log).toEqual(["a1", "b1"]);
    b1.end();
    await pb1;
    a1.fail(new Error("transient"));
    await expect(pa1).rejects.toThrow("transient");
    await turns();
    // A failure does not stop the job's next work.
    expect(log).toEqual(["a1", "b1", "a2"]);
    expect(queues.size).toBe(1);
    a2.end();
    await pa2;
    await turns();
    expect(queues.size).toBe(0);
  });

  it("settled waits for the work queued before it, not for work queued after", async () => {
    const queues = new JobQueues();
    const log: string[] = [];
    const a = held(log, "a");
    const b = held(log, "b");
    void queues.run("a", a.work);
    let settled = false;
    const done = queues.settled().then(() => (settled = true));
    void queues.run("b", b.work);
    await turns();
    expect(settled).toBe(false);
    a.end();
    await done;
    expect(settled).toBe(true);
    b.end();
  });
});
