import { describe, expect, it } from "vitest";
import { CoalescedPasses } from "../../../src/workflows/jobs/coalesced-passes.ts";

/** A pass's request as the runner's: why, and which nodes gained (undefined: any). */
interface Request {
  readonly why: string;
  readonly gained: ReadonlySet<string> | undefined;
}

const join = (queued: Request, joining: Request): Request => ({
  why: joining.why,
  gained:
    queued.gained === undefined || joining.gained === undefined
      ? undefined
      : new Set([...queued.gained, ...joining.gained]),
});

/** Passes that record what each was asked and end when the test says. */
function harness() {
  const runs: Request[] = [];
  const ends: (() => void)[] = [];
  const fails: ((err: Error) => void)[] = [];
  const passes = new CoalescedPasses<Request>(
    (r) =>
      new Promise<void>((resolve, reject) => {
        runs.push(r);
        ends.push(resolve);
        fails.push(reject);
      }),
    join,
  );
  return { passes, runs, ends, fails };
}

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

describe("passes over the Queued jobs, coalesced", () => {
  it("runs at most one more pass however many requests arrive while one runs, and answers each after a pass it saw", async () => {
    const { passes, runs, ends } = harness();
    const first = passes.request({ why: "first", gained: undefined });
    await turns();
    expect(runs).toHaveLength(1);
    const settled: number[] = [];
    const joined = Array.from({ length: 50 }, (_, i) =>
      passes.request({ why: `r${i}`, gained: new Set([`n${i % 3}`]) }).then(() => settled.push(i)),
    );
    await turns();
    // The first pass still runs: nothing else started.
    expect(runs).toHaveLength(1);
    ends[0]?.();
    await first;
    await turns();
    expect(runs).toHaveLength(2);
    expect(runs[1]).toEqual({ why: "r49", gained: new Set(["n0", "n1", "n2"]) });
    // None of the joined requests is answered before the pass that started after them ended.
    expect(settled).toEqual([]);
    ends[1]?.();
    await Promise.all(joined);
    expect(settled).toHaveLength(50);
    expect(runs).toHaveLength(2);
  });

  it("a request for every node widens a queued pass to every node", async () => {
    const { passes, runs, ends } = harness();
    void passes.request({ why: "a", gained: new Set(["n1"]) });
    await turns();
    const b = passes.request({ why: "b", gained: new Set(["n2"]) });
    const c = passes.request({ why: "c", gained: undefined });
    const d = passes.request({ why: "d", gained: new Set(["n3"]) });
    ends[0]?.();
    await turns();
    expect(runs[1]).toEqual({ why: "d", gained: undefined });
    ends[1]?.();
    await Promise.all([b, c, d]);
  });

  it("starts a new pass for a request made once the queued one started, and fails the requests of a failed pass", async () => {
    const { passes, runs, ends, fails } = harness();
    const a = passes.request({ why: "a", gained: undefined });
    await turns();
    const b = passes.request({ why: "b", gained: undefined }).catch((err: unknown) => err);
    ends[0]?.();
    await a;
    await turns();
    expect(runs.map((r) => r.why)).toEqual(["a", "b"]);
    // b runs: a request now waits for the pass after it.
    const c = passes.request({ why: "c", gained: undefined });
    await turns();
    expect(runs).toHaveLength(2);
    fails[1]?.(new Error("store unavailable"));
    expect(await b).toMatchObject({ message: "store unavailable" });
    await turns();
    expect(runs.map((r) => r.why)).toEqual(["a", "b", "c"]);
    ends[2]?.();
    await c;
  });
});
