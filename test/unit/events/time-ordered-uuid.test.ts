import { describe, expect, it } from "vitest";
import { timeOrderedUuid } from "../../../src/events/store/time-ordered-uuid.ts";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("timeOrderedUuid: event ids that the store's index takes at its end", () => {
  it("is a UUID version 7 whose first 48 bits are the time in milliseconds", () => {
    const before = Date.now();
    const id = timeOrderedUuid();
    expect(id).toMatch(V7);
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    // The counter may run the stamp a little ahead in a burst, never behind.
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThan(Date.now() + 1_000);
  });

  it("rises strictly and never repeats, also when thousands come in one millisecond", () => {
    const ids = Array.from({ length: 200_000 }, () => timeOrderedUuid());
    for (let i = 1; i < ids.length; i++) {
      if (!((ids[i] as string) > (ids[i - 1] as string))) throw new Error(`${ids[i]} does not follow ${ids[i - 1]}`);
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 1000)) expect(id).toMatch(V7);
  });

  it("fills its random bits from a random source (no two runs of ids share them)", () => {
    const tails = new Set(Array.from({ length: 10_000 }, () => timeOrderedUuid().slice(19)));
    expect(tails.size).toBe(10_000);
  });
});
