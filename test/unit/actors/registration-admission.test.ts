import { describe, expect, it } from "vitest";
import { RegistrationAdmission } from "../../../src/actors/registration-admission.ts";
import { ManualClock } from "../../support/manual-clock.ts";

const LIMITS = { maxRegistrationsPerSecond: 100, registrationBurst: 100, maxPendingNodes: 0 };

/** How many of `tries` new registrations are admitted now. */
function admitted(admission: RegistrationAdmission, tries: number): number {
  let ok = 0;
  for (let i = 0; i < tries; i++) {
    try {
      admission.admit(`n-${i}`, false, () => 0)();
      ok++;
    } catch {
      // refused: over the rate
    }
  }
  return ok;
}

describe("registration admission among several orchestrators", () => {
  it("admits this orchestrator's share of the cluster's rate and burst", async () => {
    const clock = new ManualClock();
    let share = 0.25;
    const admission = new RegistrationAdmission(LIMITS, clock, undefined, () => share);
    expect(admitted(admission, 1_000)).toBe(25);
    await clock.advance(1_000);
    expect(admitted(admission, 1_000)).toBe(25);
    // Its share grew (another orchestrator left): so does what it admits.
    share = 1;
    await clock.advance(1_000);
    expect(admitted(admission, 1_000)).toBe(100);
  });

  it("two orchestrators with half each admit together what one would", async () => {
    const clock = new ManualClock();
    const halves = [0, 1].map(() => new RegistrationAdmission(LIMITS, clock, undefined, () => 0.5));
    const sole = new RegistrationAdmission(LIMITS, clock);
    let together = 0;
    let alone = 0;
    for (let s = 0; s < 10; s++) {
      for (const half of halves) together += admitted(half, 500);
      alone += admitted(sole, 1_000);
      await clock.advance(1_000);
    }
    expect(together).toBe(alone);
    expect(alone).toBe(1_000);
  });
});
