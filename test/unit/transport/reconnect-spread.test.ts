import { describe, expect, it } from "vitest";
import { RECONNECT_WAIT_MS, reconnectSpreadMs, reconnectWaitMs } from "../../../src/transport/reconnect-spread.ts";

describe("the reconnect spread (docs/protocol.md, Reconnecting)", () => {
  it("grows with the connected fleet at the logins per second asked for, in whole seconds", () => {
    expect(reconnectSpreadMs(10_000, 500)).toBe(20_000);
    expect(reconnectSpreadMs(2_000, 500)).toBe(4_000);
    expect(reconnectSpreadMs(2_499, 500)).toBe(4_000);
    expect(reconnectSpreadMs(3, 2)).toBe(1_000);
  });

  it("is none without a fleet or a rate, or for a fleet that logs in within a second anyway", () => {
    expect(reconnectSpreadMs(499, 500)).toBe(0);
    expect(reconnectSpreadMs(0, 500)).toBe(0);
    expect(reconnectSpreadMs(10_000, 0)).toBe(0);
    expect(reconnectSpreadMs(10_000, Number.NaN)).toBe(0);
  });

  it("puts each agent's wait between the base wait and the base wait plus the spread, by its draw", () => {
    expect(reconnectWaitMs(0, 0.9)).toBe(RECONNECT_WAIT_MS);
    expect(reconnectWaitMs(20_000, 0)).toBe(RECONNECT_WAIT_MS);
    expect(reconnectWaitMs(20_000, 0.5)).toBe(RECONNECT_WAIT_MS + 10_000);
    expect(reconnectWaitMs(20_000, 0.99999)).toBeLessThan(RECONNECT_WAIT_MS + 20_000);
  });
});
