/**
 * The shape every entity's rules take (Emmett's Decider, written for Shoal): state is plain
 * data, `decide` says which events a command causes (or why not), `evolve` folds one stored
 * event into the state. The actor host and the read models fold with the same `evolve`.
 * Pure: the host supplies time and ids in the command's metadata and the event's time.
 */
export interface Decider<State, Command, Event, Refusal> {
  initialState(id: string): State;
  decide(command: Command, state: State, meta: CommandMeta): Decision<Event, Refusal>;
  /** `time` is when the event was recorded (its metadata.time): the only clock evolve sees. */
  evolve(state: State, event: Event, time: string): State;
  /** The instants at which this state wants a command of its own (none for most states). */
  deadlines?(state: State): readonly Deadline<Command>[];
}

/** What the host knows about a command besides its content. */
export interface CommandMeta {
  /** Milliseconds since the epoch, from the host's clock. */
  readonly now: number;
}

export type Decision<Event, Refusal> =
  | { readonly ok: true; readonly events: readonly Event[]; readonly note?: string }
  | { readonly ok: false; readonly refusal: Refusal };

/** A command the entity issues to itself at `at` unless its state has moved on by then. */
export interface Deadline<Command> {
  readonly name: string;
  readonly at: number;
  readonly command: Command;
  /**
   * Set on a deadline that judges another party's silence (a node that does not answer): it fires
   * only once the orchestrator has also been up and connected for this long, however long ago
   * `at` passed. Silence the orchestrator could not have heard (it was stopped, its NATS was down)
   * is not the other party's.
   */
  readonly listenMs?: number;
}

export const accept = <Event>(events: readonly Event[], note?: string): Decision<Event, never> =>
  note === undefined ? { ok: true, events } : { ok: true, events, note };

export const refuse = <Refusal>(refusal: Refusal): Decision<never, Refusal> => ({ ok: false, refusal });

/** Replays events from the initial state: how both the actor and a read model rebuild an entity. */
export function fold<State, Event>(
  decider: Pick<Decider<State, unknown, Event, unknown>, "initialState" | "evolve">,
  id: string,
  events: Iterable<{ readonly event: Event; readonly time: string }>,
): State {
  let state = decider.initialState(id);
  for (const { event, time } of events) state = decider.evolve(state, event, time);
  return state;
}
