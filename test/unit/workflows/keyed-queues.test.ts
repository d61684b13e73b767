import { describe, expect, it } from "vitest";
import { KeyedQueues } from "../../../src/workflows/keyed-queues.ts";

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
  return { name, work, end: () => end(), fail: (err: Error) => fail(err) };
}

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

type Queued = ReturnType<typeof held> & { readonly done: Promise<void> };

/** `first` runs and `second`, queued behind it on its key, waits; once `first` has ended, `second` runs. */
async function inTurn(log: string[], first: Queued, second: Queued): Promise<void> {
  await turns();
  expect(log).toEqual([first.name]);
  first.end();
  await first.done;
  await turns();
  expect(log).toEqual([first.name, second.name]);
  second.end();
  await second.done;
}

describe("keyed queues", () => {
  it("runs a key's work in order, other keys' meanwhile, and forgets a key once idle", async () => {
    const queues = new KeyedQueues();
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
    // A failure does not stop the key's next work.
    expect(log).toEqual(["a1", "b1", "a2"]);
    expect(queues.size).toBe(1);
    a2.end();
    await pa2;
    await turns();
    expect(queues.size).toBe(0);
  });

  it("starts work on an idle key within the run call, and a key's next work only once the one before it ended", async () => {
    const queues = new KeyedQueues();
    const log: string[] = [];
    const a1 = held(log, "a1");
    const a2 = held(log, "a2");
    const pa1 = queues.run("a", a1.work);
    expect(log).toEqual(["a1"]);
    const pa2 = queues.run("a", a2.work);
    await inTurn(log, { ...a1, done: pa1 }, { ...a2, done: pa2 });
  });

  it("queues a run for the same key made while a work starts behind that work, not beside it", async () => {
    const queues = new KeyedQueues();
    const log: string[] = [];
    const outer = held(log, "outer");
    const inner = held(log, "inner");
    let innerDone = Promise.resolve();
    const outerDone = queues.run("a", () => {
      innerDone = queues.run("a", inner.work);
      return outer.work();
    });
    await inTurn(log, { ...outer, done: outerDone }, { ...inner, done: innerDone });
  });

  it("takes a work that throws before its first await as a failure, and runs the key's next work", async () => {
    const queues = new KeyedQueues();
    const log: string[] = [];
    const next = held(log, "next");
    const thrown = queues.run("a", (): Promise<void> => {
      throw new Error("at once");
    });
    const after = queues.run("a", next.work);
    await expect(thrown).rejects.toThrow("at once");
    await turns();
    expect(log).toEqual(["next"]);
    next.end();
    await after;
  });

  it("holds no entry for the keys whose work has ended, however many there were", async () => {
    const queues = new KeyedQueues();
    const runs: Promise<number>[] = [];
    for (let i = 0; i < 1_000; i++) {
      runs.push(queues.run(`k-${i}`, async () => i));
      runs.push(queues.run(`k-${i}`, () => Promise.reject(new Error(`k-${i}`))).catch(() => -1));
    }
    expect(queues.size).toBe(1_000);
    await Promise.all(runs);
    await turns();
    expect(queues.size).toBe(0);
  });

  it("settled waits for the work queued before it, not for work queued after", async () => {
    const queues = new KeyedQueues();
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

  it("settled called from another queue's work waits for the work queued before that work, not in the same turn after", async () => {
    // As the job runner's node work waits for the jobs' work: two queues, one waiting for the other.
    const jobs = new KeyedQueues();
    const nodes = new KeyedQueues();
    const log: string[] = [];
    const a = held(log, "a");
    const b = held(log, "b");
    void jobs.run("a", a.work);
    const lost = nodes.run("n1", async () => {
      await jobs.settled();
      log.push("n1");
    });
    void jobs.run("b", b.work);
    await turns();
    expect(log).toEqual(["a", "b"]);
    a.end();
    await turns(20);
    expect(log).toEqual(["a", "b", "n1"]);
    b.end();
    await lost;
  });
});
