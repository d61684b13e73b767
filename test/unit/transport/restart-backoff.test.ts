import { describe, expect, it } from "vitest";
import { RestartBackoff } from "../../../src/transport/restart-backoff.ts";

describe("RestartBackoff", () => {
  it("doubles from the initial delay up to the cap while the process keeps failing", () => {
    const backoff = new RestartBackoff({ initialMs: 250, maxMs: 10_000, stableAfterMs: 60_000 });
    expect(Array.from({ length: 9 }, () => backoff.next(100))).toEqual([
      250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000,
    ]);
  });

  it("starts again from the initial delay after the process stayed up for stableAfterMs", () => {
    const backoff = new RestartBackoff({ initialMs: 250, maxMs: 10_000, stableAfterMs: 60_000 });
    for (let i = 0; i < 5; i++) backoff.next(0);
    expect(backoff.next(59_999)).toBe(8000);
    expect(backoff.next(60_000)).toBe(250);
    expect(backoff.next(0)).toBe(500);
  });

  it("stays at the cap however long a crash loop lasts", () => {
    const backoff = new RestartBackoff({ initialMs: 250, maxMs: 10_000, stableAfterMs: 60_000 });
    let last = 0;
    for (let i = 0; i < 5000; i++) last = backoff.next(0);
    expect(last).toBe(10_000);
  });
});
