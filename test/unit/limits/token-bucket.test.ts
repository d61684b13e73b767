import { describe, expect, it } from "vitest";
import { TokenBucket } from "../../../src/limits/token-bucket.ts";
import { ManualClock } from "../../support/manual-clock.ts";

const takeAll = (bucket: TokenBucket, tries: number) =>
  Array.from({ length: tries }, () => bucket.take().ok).filter(Boolean).length;

describe("token bucket", () => {
  it("lets a full burst through at once, then one token per 1/rate seconds", async () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ ratePerSecond: 2, burst: 5 }, clock);
    expect(takeAll(bucket, 20)).toBe(5);
    expect(bucket.take()).toEqual({ ok: false, retryAfterMs: 500 });
    await clock.advance(499);
    expect(bucket.take()).toEqual({ ok: false, retryAfterMs: 1 });
    await clock.advance(1);
    expect(bucket.take()).toEqual({ ok: true });
    expect(bucket.take().ok).toBe(false);
    await clock.advance(10_000); // a long quiet spell refills up to the burst, no more
    expect(takeAll(bucket, 20)).toBe(5);
  });

  it("sustains the rate over time whatever the demand", async () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ ratePerSecond: 3, burst: 1 }, clock);
    let admitted = 0;
    for (let ms = 0; ms < 10_000; ms += 10) {
      admitted += takeAll(bucket, 50);
      await clock.advance(10);
    }
    expect(admitted).toBe(1 + 3 * 10 - 1); // the initial token, then 3/s for 10 s (the last one is due at 10 000 ms)
  });

  it("gives nothing back when the clock steps backwards", async () => {
    let now = 1_000_000;
    const bucket = new TokenBucket({ ratePerSecond: 1, burst: 1 }, { now: () => now });
    expect(bucket.take().ok).toBe(true);
    now -= 60_000;
    expect(bucket.take().ok).toBe(false);
    now += 1000;
    expect(bucket.take().ok).toBe(true);
  });

  it("refuses a configuration that could never admit anything", () => {
    const clock = new ManualClock();
    expect(() => new TokenBucket({ ratePerSecond: 0, burst: 5 }, clock)).toThrow(RangeError);
    expect(() => new TokenBucket({ ratePerSecond: 1, burst: 0 }, clock)).toThrow(RangeError);
  });

  it("takes a cost of several tokens, never more than the burst", async () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ ratePerSecond: 10, burst: 10 }, clock);
    // A cost of 1/share: a quarter of the burst, then a quarter of the rate.
    expect(Array.from({ length: 10 }, () => bucket.take(4).ok).filter(Boolean).length).toBe(2);
    expect(bucket.take(4)).toEqual({ ok: false, retryAfterMs: 200 });
    await clock.advance(200);
    expect(bucket.take(4).ok).toBe(true);
    // More than the burst costs the burst: it still passes once the bucket is full.
    await clock.advance(1_000);
    expect(bucket.take(Number.POSITIVE_INFINITY).ok).toBe(true);
    expect(bucket.take(1).ok).toBe(false);
  });
});
