import { getNextSnapshot, type AnyStateMachine, type StateValue } from "xstate";

/** A guard as `setup({ guards })` holds it: what the chart reads of the entity's data and of the event. */
type Guard = (args: { context: unknown; event: unknown }, params: unknown) => boolean;

/** Where the chart's guards choose an event's target in one state: the targets by the guards' outcomes. */
class Choice<Target> {
  constructor(
    private readonly guards: readonly Guard[],
    /** By the guards' outcomes as a bit mask (bit i: guard i holds). */
    private readonly targets: readonly Target[],
  ) {}

  pick(context: unknown, event: unknown): Target {
    let mask = 0;
    for (let i = 0; i < this.guards.length; i++) if (this.guards[i]!({ context, event }, undefined)) mask |= 1 << i;
    return this.targets[mask]!;
  }
}

/** Where one event type leads from one chart state: a fixed target, or one picked by the chart's guards. */
type Entry<Target> =
  | { readonly guarded: false; readonly target: Target }
  | {
      readonly guarded: true;
      readonly guards: readonly Guard[];
      /** By the guards' outcomes as a bit mask (bit i: guard i holds). */
      readonly targets: readonly Target[];
    };

/**
 * A statechart compiled into a lookup table: (state, event type) → the state the event leads to.
 * Built once from the chart by asking xstate itself, so the table cannot say what the chart does
 * not; folds use it because resolving a snapshot per event costs far more than a fold may.
 * `Target` is the entity's own reading of a chart state (the fields of its state that the chart
 * decides), made once per state here rather than once per event.
 */
export interface ChartTable<
  Target,
  Context,
  Event extends { readonly type: string },
  Guarded extends Event["type"] = never,
> {
  /** Every state of the chart, as xstate writes its value, in the chart's order. */
  readonly values: readonly StateValue[];
  /** The entity's reading of each state in `values`, at the same index. */
  readonly targets: readonly Target[];
  /** The index in `values` of a state value (throws on a value the chart does not have). */
  indexOf(value: StateValue): number;
  /**
   * By event type whose target no guard chooses, then by state: where the event leads, undefined where the chart
   * refuses it. A fold that has switched on the event's type reads its column by name: one property load and one
   * array load per event.
   */
  readonly columns: Readonly<Record<Exclude<Event["type"], Guarded>, readonly (Target | undefined)[]>>;
  /** The same for the event types whose target the chart's guards choose: `pick` asks them (undefined: refused). */
  readonly choices: Readonly<
    Record<Guarded, readonly ({ pick(context: Context, event: Event): Target } | undefined)[]>
  >;
  /** Whether the chart takes an event of this type in the state at `from`, whatever its data. */
  allows(from: number, type: Event["type"]): boolean;
  /** The indexes of the states an event of this type may lead to, from wherever the chart takes it. */
  leadsTo(type: Event["type"]): ReadonlySet<number>;
}

/** A state value as one string: `absent`, `registered.(health.healthy,membership.pending)`. */
export function stateKey(value: StateValue): string {
  if (typeof value === "string") return value;
  const parts = Object.keys(value)
    .sort()
    .map((k) => {
      const inner = value[k];
      return inner === undefined ? k : `${k}.${stateKey(inner)}`;
    });
  return parts.length === 1 ? parts[0]! : `(${parts.join(",")})`;
}

interface StateNodeLike {
  readonly key: string;
  readonly type: "atomic" | "compound" | "parallel" | "final" | "history";
  readonly states: Readonly<Record<string, StateNodeLike>>;
}

/** Every value a state node can contribute: its children's for a compound, their product for a parallel one. */
function valuesWithin(node: StateNodeLike): StateValue[] {
  const children = Object.values(node.states).filter((c) => c.type !== "history");
  const of = (child: StateNodeLike): StateValue[] =>
    child.type === "atomic" || child.type === "final"
      ? [child.key]
      : valuesWithin(child).map((v) => ({ [child.key]: v }));
  if (node.type !== "parallel") return children.flatMap(of);
  let product: Record<string, StateValue>[] = [{}];
  for (const child of children) {
    const inner = valuesWithin(child);
    product = product.flatMap((p) => inner.map((v) => ({ ...p, [child.key]: v })));
  }
  return product;
}

/**
 * Compiles `machine` for folding. `project` reads a chart state as the entity's fields;
 * `resolveContext` is any context the chart resolves a state with (its guards are forced here, one
 * outcome after another, so their reading of it does not matter). Guards may only choose between
 * targets: an event type the chart takes under one outcome of its guards and refuses under
 * another would make its legality depend on data, which is decide's to check, and is refused here.
 */
export function compileChart<
  Target,
  Context,
  Event extends { readonly type: string },
  Guarded extends Event["type"] = never,
>(
  machine: AnyStateMachine,
  project: (value: StateValue) => Target,
  resolveContext: unknown,
  guarded: readonly Guarded[] = [],
): ChartTable<Target, Context, Event, Guarded> {
  const values = valuesWithin(machine.root as unknown as StateNodeLike);
  const keys = values.map(stateKey);
  const targets = values.map(project);
  const indexByKey = new Map(keys.map((k, i) => [k, i]));
  const eventTypes = [...(machine.root.events as readonly string[])].filter((t) => !t.startsWith("xstate."));
  const guardNames = Object.keys(machine.implementations.guards);
  const guards = guardNames.map((name) => machine.implementations.guards[name] as unknown as Guard);
  const forced = Array.from({ length: 2 ** guardNames.length }, (_, mask) =>
    machine.provide({ guards: Object.fromEntries(guardNames.map((name, i) => [name, () => (mask & (1 << i)) !== 0])) }),
  );

  const rows: Record<string, Entry<Target> | undefined>[] = [];
  const leads = new Map<string, Set<number>>();
  values.forEach((value, from) => {
    const row: Record<string, Entry<Target> | undefined> = {};
    for (const type of eventTypes) row[type] = undefined;
    const snapshots = forced.map((m) => m.resolveState({ value, context: resolveContext }));
    for (const type of eventTypes) {
      const outcomes = forced.map((m, mask) => {
        const snapshot = snapshots[mask]!;
        const taken = m.getTransitionData(snapshot, { type });
        // xstate's own test of a transition that happens (`can`): a target, or an action on a targetless one.
        if (!taken.some((t) => t.target !== undefined || t.actions.length > 0)) return undefined;
        const to = indexByKey.get(stateKey(getNextSnapshot(m, snapshot, { type }).value));
        if (to === undefined) throw new Error(`chart ${machine.id}: ${type} leads out of its own states`);
        return to;
      });
      const legal = outcomes.filter((o) => o !== undefined);
      if (legal.length === 0) continue;
      if (legal.length !== outcomes.length)
        throw new Error(`chart ${machine.id}: whether ${type} is taken in ${keys[from]} depends on a guard`);
      for (const to of legal) leads.set(type, (leads.get(type) ?? new Set()).add(to));
      const first = legal[0]!;
      row[type] = legal.every((o) => o === first)
        ? { guarded: false, target: targets[first]! }
        : { guarded: true, guards, targets: legal.map((o) => targets[o]!) };
    }
    rows.push(row);
  });

  // By event type, then by state: the target, or the Choice where the chart's guards pick it.
  const columns: Record<string, (Target | Choice<Target> | undefined)[]> = {};
  for (const type of eventTypes)
    columns[type] = rows.map((row) => {
      const entry = row[type];
      return entry === undefined ? undefined : entry.guarded ? new Choice(entry.guards, entry.targets) : entry.target;
    });
  const guardedTypes = eventTypes.filter((type) => columns[type]!.some((cell) => cell instanceof Choice));
  if ([...guardedTypes].sort().join() !== [...guarded].sort().join())
    throw new Error(
      `chart ${machine.id}: guards choose the targets of ${guardedTypes.join(", ")}, not ${guarded.join(", ")}`,
    );
  const unguarded = Object.fromEntries(
    eventTypes.filter((type) => !guardedTypes.includes(type)).map((type) => [type, columns[type]]),
  ) as unknown as ChartTable<Target, Context, Event, Guarded>["columns"];
  const choices = Object.fromEntries(guardedTypes.map((type) => [type, columns[type]])) as unknown as ChartTable<
    Target,
    Context,
    Event,
    Guarded
  >["choices"];
  const none: ReadonlySet<number> = new Set();
  return {
    values,
    targets,
    columns: unguarded,
    choices,
    indexOf(value) {
      const index = indexByKey.get(stateKey(value));
      if (index === undefined) throw new Error(`chart ${machine.id} has no state ${stateKey(value)}`);
      return index;
    },
    allows: (from, type) => rows[from]?.[type] !== undefined,
    leadsTo: (type) => leads.get(type) ?? none,
  };
}
