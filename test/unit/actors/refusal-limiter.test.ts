import { describe, expect, it } from "vitest";
import { RefusalLimiter } from "../../../src/actors/refusal-limiter.ts";

describe("RefusalLimiter", () => {
  it("allows one refusal per node per interval", () => {
    let now = 0;
    const limiter = new RefusalLimiter(5000, 100, () => now);
    expect(limiter.allow("a")).toBe(true);
    expect(limiter.allow("a")).toBe(false);
    expect(limiter.allow("b")).toBe(true);
    now = 4999;
    expect(limiter.allow("a")).toBe(false);
    now = 5000;
    expect(limiter.allow("a")).toBe(true);
    expect(limiter.allow("a")).toBe(false);
    expect(limiter.allow("b")).toBe(true);
  });

  it("remembers at most maxNodes nodes: a flood of new ids is refused nothing more once full, until their interval is over", () => {
    let now = 0;
    const limiter = new RefusalLimiter(1000, 3, () => now);
    expect(["a", "b", "c"].map((id) => limiter.allow(id))).toEqual([true, true, true]);
    expect(limiter.allow("d")).toBe(false); // full, nobody's interval over
    now = 500;
    expect(limiter.allow("e")).toBe(false); // pruned at 0 already: not again within the interval
    now = 1000;
    expect(limiter.allow("d")).toBe(true); // a, b, c forgotten
    expect(limiter.allow("a")).toBe(true);
    expect(limiter.allow("b")).toBe(true);
    expect(limiter.allow("c")).toBe(false); // full again
    expect(limiter.allow("d")).toBe(false); // still within its own interval
  });
});
