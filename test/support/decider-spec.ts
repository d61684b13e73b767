import { expect } from "vitest";
import { fold, type Decider } from "../../machines/decider.ts";

export const SPEC_TIME = "2026-01-01T00:00:00.000Z";
export const SPEC_NOW = Date.parse(SPEC_TIME);

/**
 * Decider tests as specifications: given(past events).when(command).then(new events), or
 * .thenThrows(refusal) or .thenNothingHappened(). The history is folded with the decider's own
 * evolve, so a spec fails if decide and evolve disagree about a state.
 */
export function deciderSpec<S, C, E, R>(decider: Decider<S, C, E, R>, id: string) {
  return (history: readonly E[] = []) => {
    const state = fold(
      decider,
      id,
      history.map((event) => ({ event, time: SPEC_TIME })),
    );
    return {
      state,
      /** `now`: the command's time (default SPEC_TIME, when the history was recorded). */
      when(command: C, now: number = SPEC_NOW) {
        const decision = decider.decide(command, state, { now });
        const events = () => {
          if (!decision.ok)
            throw new Error(`expected events, but the command was refused: ${JSON.stringify(decision.refusal)}`);
          return decision.events;
        };
        return {
          decision,
          /** Exactly these events, in this order. */
          then(expected: readonly E[], note?: string): void {
            expect(events()).toEqual(expected);
            if (note !== undefined) expect(decision).toMatchObject({ note });
          },
          /** Events matching these (partial) shapes, in this order and no others. */
          thenMatches(expected: readonly unknown[]): void {
            const got = events();
            expect(got).toHaveLength(expected.length);
            expect(got).toMatchObject(expected);
          },
          thenThrows(refusal: Partial<R>): void {
            expect(decision).toMatchObject({ ok: false, refusal });
          },
          thenNothingHappened(): void {
            expect(events()).toEqual([]);
          },
        };
      },
    };
  };
}
