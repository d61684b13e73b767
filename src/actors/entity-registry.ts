import type { Logger } from "pino";
import type { CommandContext } from "./command-context.ts";
import { EntityActor, type ActorEnvironment, type CommandResult, type ExecuteOptions } from "./entity-actor.ts";
import type { EntityKind } from "./entity-kind.ts";
import { systemContext } from "./command-context.ts";
import type { Deadline } from "../../machines/decider.ts";
import type { Listening } from "./listening.ts";

export interface EntityRegistryOptions {
  /** Actors idle for this long are dropped from memory; the stream is the truth, memory a cache. */
  readonly idleMs: number;
  /**
   * At most this many actors stay resident: a load beyond it drops the least recently used idle
   * ones (never one with a command queued or under way), however recently used.
   */
  readonly maxResident: number;
  readonly logger: Logger;
  /**
   * Whether the orchestrator can hear its nodes now, and since when: a deadline with `listenMs`
   * fires no earlier than that long after it, and not at all while it cannot. Without one, such a
   * deadline fires at its instant like any other.
   */
  readonly listening?: Listening;
  /**
   * Whether this orchestrator acts on the kind's deadlines now (among several, the one running its duty). A deadline
   * that comes while it does not is dropped: the duty's next holder arms every deadline from its read model.
   * Absent: always.
   */
  readonly firesDeadlines?: () => boolean;
}

/**
 * The actors of one kind of entity: loaded from their stream on first use, one per id, and
 * passivated when idle. An actor whose command stored nothing for a new id (a refused or
 * failed registration) does not stay behind.
 */
export class EntityRegistry<State, Command, Event, Refusal> {
  /** Least recently used first: a command moves its actor to the end. */
  private readonly resident = new Map<string, EntityActor<State, Command, Event, Refusal>>();
  /**
   * Actors loaded in this turn of the event loop: kept until their caller's command is queued
   * (the continuation of the load runs in a later microtask), so that a storm of loads never
   * evicts an actor between its load and its first command.
   */
  private readonly justLoaded = new Set<EntityActor<State, Command, Event, Refusal>>();
  private readonly endTurn = () => {
    this.justLoaded.clear();
    this.trim();
  };
  private readonly loading = new Map<string, Promise<EntityActor<State, Command, Event, Refusal>>>();
  private readonly stopSweeps: () => void;
  /** The actors' environment: the registry's, with its stop. */
  private readonly actorEnv: ActorEnvironment;
  private readonly stopping = new AbortController();
  private passivatedCount = 0;
  private loadedCount = 0;
  private stopped = false;
  /** Deadlines armed per entity, by name, so that those its state no longer asks for are cancelled. */
  private readonly armed = new Map<string, Map<string, Deadline<Command>>>();

  constructor(
    private readonly kind: EntityKind<State, Command, Event, Refusal>,
    private readonly env: ActorEnvironment,
    private readonly options: EntityRegistryOptions,
  ) {
    this.actorEnv = { ...env, stopping: this.stopping.signal };
    options.listening?.onResume(() => this.rearmListening());
    // On the one heap like every other wait: a test's clock drives it.
    this.stopSweeps = env.deadlines.every(`idle-sweep/${kind.category}`, Math.max(1000, options.idleMs / 2), () =>
      this.sweep(),
    );
  }

  /**
   * Arms exactly the deadlines this state asks for (and cancels the others): after every command,
   * and for each entity whose state recovery rebuilt without loading its actor.
   */
  arm(id: string, state: State): void {
    if (!this.kind.decider.deadlines) return;
    const scheduler = this.env.deadlines;
    const wanted = this.kind.decider.deadlines(state);
    const before = this.armed.get(id);
    const now = new Map<string, Deadline<Command>>();
    for (const deadline of wanted) {
      now.set(deadline.name, deadline);
      if (before?.get(deadline.name)?.at === deadline.at) continue;
      this.schedule(id, deadline);
    }
    for (const name of before?.keys() ?? []) if (!now.has(name)) scheduler.cancel(this.deadlineKey(id, name));
    if (now.size > 0) this.armed.set(id, now);
    else this.armed.delete(id);
  }

  private deadlineKey(id: string, name: string): string {
    return `${this.kind.category}/${id}/${name}`;
  }

  /**
   * When a deadline may fire: its instant, or for one that judges a node's silence (`listenMs`)
   * no earlier than that long after the orchestrator began listening; undefined while it is not.
   */
  private fireAt(deadline: Deadline<Command>): number | undefined {
    const listening = this.options.listening;
    if (deadline.listenMs === undefined || listening === undefined) return deadline.at;
    const since = listening.since;
    return since === undefined ? undefined : Math.max(deadline.at, since + deadline.listenMs);
  }

  /** Puts the deadline in the heap at fireAt, or holds it out (not listening) until rearmListening. */
  private schedule(id: string, deadline: Deadline<Command>): void {
    const scheduler = this.env.deadlines;
    const key = this.deadlineKey(id, deadline.name);
    const at = this.fireAt(deadline);
    if (at === undefined) scheduler.cancel(key);
    else scheduler.set(key, at, () => void this.fire(id, deadline));
  }

  /** The orchestrator listens again: every deadline that judges silence counts its listenMs from now. */
  private rearmListening(): void {
    if (this.stopped) return;
    for (const [id, deadlines] of this.armed) {
      for (const d of deadlines.values()) if (d.listenMs !== undefined) this.schedule(id, d);
    }
  }

  /** A deadline came: its command runs unless the state no longer asks for it at that instant. */
  private async fire(id: string, deadline: Deadline<Command>): Promise<void> {
    if (this.stopped) return;
    const { name, at, command } = deadline;
    if (this.options.firesDeadlines?.() === false) {
      this.armed.get(id)?.delete(name);
      return;
    }
    if (deadline.listenMs !== undefined) {
      // Not listening for long enough (the transport went down since it was armed): held or moved, not fired.
      const due = this.fireAt(deadline);
      if (due === undefined || due > this.env.clock.now()) return this.schedule(id, deadline);
    }
    this.armed.get(id)?.delete(name);
    try {
      // Judged on the state of the actor that runs the command, whichever is resident by then.
      await this.execute(id, command, systemContext(`deadline ${name} passed`), {
        precondition: (state) =>
          (this.kind.decider.deadlines?.(state) ?? []).some((d) => d.name === name && d.at === at),
      });
    } catch (err) {
      this.options.logger.error(
        { err, category: this.kind.category, id, deadline: name },
        "a deadline's command failed; it stays armed and is retried",
      );
      // Stored state still asks for it: arm it again a little later rather than lose it.
      const retryAt = this.env.clock.now() + 5_000;
      this.env.deadlines.set(this.deadlineKey(id, name), retryAt, () => void this.fire(id, deadline));
    }
  }

  /**
   * The resident actor, loading it from its stream first if needed. `streamAbsent`: the caller knows
   * of no event ever stored for the id, so the load skips reading its (empty) stream. Should another
   * writer have stored some meanwhile, the actor's first append (expecting no stream) conflicts, and
   * the actor reads the stream and decides again, as after any conflict. Only for a command that
   * appends on an empty stream (a registration): a refusal appends nothing, so nothing would
   * correct one decided on the empty state.
   */
  async get(id: string, streamAbsent = false): Promise<EntityActor<State, Command, Event, Refusal>> {
    const actor = this.resident.get(id);
    if (actor) return actor;
    let pending = this.loading.get(id);
    if (!pending) {
      pending = (async () => {
        const fresh = new EntityActor(this.kind, id, this.actorEnv);
        try {
          // Awaited either way: the load must stay under way (in `loading`) until after it is listed there.
          await (streamAbsent ? undefined : fresh.catchUp());
        } finally {
          this.loading.delete(id);
        }
        if (this.justLoaded.size === 0) setImmediate(this.endTurn);
        this.justLoaded.add(fresh);
        this.resident.set(id, fresh);
        this.loadedCount++;
        this.trim();
        this.arm(id, fresh.state);
        return fresh;
      })();
      this.loading.set(id, pending);
    }
    return pending;
  }

  /**
   * Drops the idle resident actor of `id` if its stream has moved past it (the read model folded `revision`, which
   * another orchestrator wrote): its next command reads the stream again instead of deciding on a stale state. An
   * actor with a command under way stays; its append conflicts and catches up.
   */
  dropIfBehind(id: string, revision: number): void {
    const actor = this.resident.get(id);
    if (actor === undefined || !actor.idle || actor.currentRevision >= revision) return;
    this.drop(id, actor);
  }

  /** Forgets a resident actor; its next command loads the stream again. */
  private drop(id: string, actor: EntityActor<State, Command, Event, Refusal>): void {
    this.justLoaded.delete(actor);
    this.resident.delete(id);
    this.passivatedCount++;
  }

  /** The actor if it is in memory now: for reads that must not touch the store. */
  peek(id: string): EntityActor<State, Command, Event, Refusal> | undefined {
    return this.resident.get(id);
  }

  execute(
    id: string,
    command: Command,
    context: CommandContext,
    options?: ExecuteOptions<State>,
  ): Promise<CommandResult<Event>> {
    // A resident actor takes the command at once; only a load waits for the store first.
    const actor = this.resident.get(id);
    if (actor) return this.executeOn(actor, id, command, context, options);
    return this.get(id).then((loaded) => this.executeOn(loaded, id, command, context, options));
  }

  /**
   * Like execute, and hands over the state the command left (that very actor's, even if it is evicted meanwhile);
   * `streamAbsent` as for get.
   */
  async executeWithState(
    id: string,
    command: Command,
    context: CommandContext,
    options?: ExecuteOptions<State>,
    streamAbsent = false,
  ): Promise<[CommandResult<Event>, State]> {
    const actor = this.resident.get(id) ?? (await this.get(id, streamAbsent));
    const result = await this.executeOn(actor, id, command, context, options);
    return [result, actor.state];
  }

  private async executeOn(
    actor: EntityActor<State, Command, Event, Refusal>,
    id: string,
    command: Command,
    context: CommandContext,
    options: ExecuteOptions<State> | undefined,
  ): Promise<CommandResult<Event>> {
    if (this.resident.get(id) === actor) {
      // Most recently used last: eviction takes from the front.
      this.resident.delete(id);
      this.resident.set(id, actor);
    }
    try {
      const result = await actor.execute(command, context, options);
      if (result.events.length > 0) this.arm(id, actor.state);
      return result;
    } finally {
      // A new id whose first command stored nothing leaves no actor behind (no unbounded growth from refusals).
      if (actor.currentRevision === -1 && actor.idle && this.resident.get(id) === actor) this.resident.delete(id);
      // Loads while every resident actor was busy may have left more than the bound: trim now that this one is done.
      else if (this.resident.size > this.options.maxResident) this.trim();
    }
  }

  /** Drops the least recently used idle actors beyond maxResident; busy and just-loaded ones stay. */
  private trim(): number {
    const excess = this.resident.size - this.options.maxResident;
    if (excess <= 0) return 0;
    let dropped = 0;
    for (const [id, actor] of this.resident) {
      if (dropped >= excess) break;
      if (!actor.idle || this.justLoaded.has(actor)) continue;
      this.drop(id, actor);
      dropped++;
    }
    return dropped;
  }

  /** The kind's stream category: what its actors are counted as (`entity` on /metrics). */
  get category(): string {
    return this.kind.category;
  }

  get residentCount(): number {
    return this.resident.size;
  }

  get passivated(): number {
    return this.passivatedCount;
  }

  get loaded(): number {
    return this.loadedCount;
  }

  /**
   * Drops the idle resident actors `which` picks (a partition another orchestrator now owns: what this one holds of
   * them would only go stale). One with a command under way stays; its next conflict brings it up to date.
   */
  dropWhere(which: (id: string) => boolean): number {
    let dropped = 0;
    for (const [id, actor] of this.resident) {
      if (!actor.idle || !which(id)) continue;
      this.drop(id, actor);
      dropped++;
    }
    return dropped;
  }

  /** Drops idle actors: those unused for idleMs, then the longest idle beyond maxResident. */
  sweep(): void {
    const now = this.env.clock.now();
    const { idleMs } = this.options;
    let dropped = 0;
    for (const [id, actor] of this.resident) {
      if (actor.idle && now - actor.lastUsed >= idleMs) {
        this.drop(id, actor);
        dropped++;
      }
    }
    dropped += this.trim();
    if (dropped > 0) {
      this.options.logger.debug(
        { category: this.kind.category, passivated: dropped, resident: this.resident.size },
        "passivated idle actors",
      );
    }
  }

  stop(): void {
    this.stopped = true;
    this.stopSweeps();
    this.stopping.abort();
  }
}
