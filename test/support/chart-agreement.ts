import { expect } from "vitest";
import { getNextSnapshot, type AnyStateMachine, type StateValue } from "xstate";
import type { Decider } from "../../machines/decider.ts";
import { stateKey } from "../../machines/compile-chart.ts";

/** An entity as its chart, its fold and its own reading of where it is in the chart. */
export interface ChartedEntity<State, Command, Event extends { readonly type: string }> {
  readonly chart: AnyStateMachine;
  readonly decider: Decider<State, Command, Event, unknown>;
  readonly id: string;
  /** The chart state the entity says it is in (what decide and evolve ask the chart about). */
  valueOf(state: State): StateValue;
  /** Events of every type the catalog has, with the data variants that lead to different states. */
  readonly events: readonly Event[];
}

const TIME = "2026-01-01T00:00:00.000Z";

/** xstate's own answer (not the compiled table's): does the chart take this event here, and where does it lead? */
export function chartStep(
  chart: AnyStateMachine,
  value: StateValue,
  context: unknown,
  event: { readonly type: string },
): string | undefined {
  const snapshot = chart.resolveState({ value, context });
  return snapshot.can(event) ? stateKey(getNextSnapshot(chart, snapshot, event).value) : undefined;
}

/** Every state reached by folding the sample events onto the initial state, `depth` events deep (deduplicated). */
export function statesReached<State, Command, Event extends { readonly type: string }>(
  entity: ChartedEntity<State, Command, Event>,
  depth: number,
): State[] {
  let frontier: State[] = [entity.decider.initialState(entity.id)];
  const all = new Map(frontier.map((s) => [JSON.stringify(s), s]));
  for (let round = 0; round < depth; round++) {
    const next: State[] = [];
    for (const s of frontier)
      for (const e of entity.events) {
        const after = entity.decider.evolve(s, e, TIME);
        const key = JSON.stringify(after);
        if (!all.has(key)) {
          all.set(key, after);
          next.push(after);
        }
      }
    frontier = next;
  }
  return [...all.values()];
}

/**
 * From each state, each sample event: where the chart (xstate itself) takes it, evolve lands in
 * the chart's target; where the chart refuses it, evolve leaves the state as it is. Returns the
 * (state value, event type) pairs seen, taken and refused, so that a spec can check it covered them.
 */
export function expectEvolveFollowsTheChart<State, Command, Event extends { readonly type: string }>(
  entity: ChartedEntity<State, Command, Event>,
  states: readonly State[],
): { taken: Set<string>; refused: Set<string> } {
  const taken = new Set<string>();
  const refused = new Set<string>();
  for (const state of states) {
    const value = entity.valueOf(state);
    for (const event of entity.events) {
      const target = chartStep(entity.chart, value, state, event);
      const after = entity.decider.evolve(state, event, TIME);
      const pair = `${stateKey(value)} × ${event.type}`;
      if (target === undefined) {
        expect(after, `${pair}: the chart refuses it, evolve must leave the state as it is`).toBe(state);
        refused.add(pair);
      } else {
        expect(stateKey(entity.valueOf(after)), `${pair}: evolve must go where the chart goes`).toBe(target);
        taken.add(pair);
      }
    }
  }
  return { taken, refused };
}

/**
 * From each state, each command: every event decide emits is one the chart takes in the state
 * it is applied to (the events folded one after another). Returns how many events were checked.
 */
export function expectDecideEmitsOnlyWhatTheChartTakes<State, Command, Event extends { readonly type: string }>(
  entity: ChartedEntity<State, Command, Event>,
  states: readonly State[],
  commands: readonly Command[],
  now: number,
): number {
  let checked = 0;
  for (const start of states)
    for (const command of commands) {
      const decision = entity.decider.decide(command, start, { now });
      if (!decision.ok) continue;
      let state = start;
      for (const event of decision.events) {
        const value = entity.valueOf(state);
        const label = `${JSON.stringify(command).slice(0, 80)} in ${stateKey(value)} emits ${event.type}`;
        expect(chartStep(entity.chart, value, state, event), label).toBeDefined();
        state = entity.decider.evolve(state, event, TIME);
        checked++;
      }
    }
  return checked;
}
