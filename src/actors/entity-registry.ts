import type { Logger } from "pino";
import type { CommandContext } from "./command-context.ts";
import { EntityActor, type ActorEnvironment, type CommandResult, type ExecuteOptions } from "./entity-actor.ts";
import type { EntityKind } from "./entity-kind.ts";
import type { TimerHandle } from "./clock.ts";

export interface EntityRegistryOptions {
  /** Actors idle for this long are dropped from memory; the stream is the truth, memory a cache. */
  readonly idleMs: number;
  /** Above this many resident actors, the longest idle go first, however recently used. */
  readonly maxResident: number;
  readonly logger: Logger;
}

/**
 * The actors of one kind of entity: loaded from their stream on first use, one per id, and
 * passivated when idle. An actor whose command stored nothing for a new id (a refused or
 * failed registration) does not stay behind.
 */
export class EntityRegistry<State, Command, Event, Refusal> {
  private readonly resident = new Map<string, EntityActor<State, Command, Event, Refusal>>();
  private readonly loading = new Map<string, Promise<EntityActor<State, Command, Event, Refusal>>>();
  private sweepTimer: TimerHandle | undefined;
  private passivatedCount = 0;
  private loadedCount = 0;
  private stopped = false;

  constructor(
    private readonly kind: EntityKind<State, Command, Event, Refusal>,
    private readonly env: ActorEnvironment,
    private readonly options: EntityRegistryOptions,
  ) {
    this.scheduleSweep();
  }

  /** The resident actor, loading it from its stream first if needed. */
  async get(id: string): Promise<EntityActor<State, Command, Event, Refusal>> {
    const actor = this.resident.get(id);
    if (actor) return actor;
    let pending = this.loading.get(id);
    if (!pending) {
      pending = (async () => {
        const fresh = new EntityActor(this.kind, id, this.env);
        try {
          await fresh.catchUp();
        } finally {
          this.loading.delete(id);
        }
        this.resident.set(id, fresh);
        this.loadedCount++;
        return fresh;
      })();
      this.loading.set(id, pending);
    }
    return pending;
  }

  /** The actor if it is in memory now: for reads that must not touch the store. */
  peek(id: string): EntityActor<State, Command, Event, Refusal> | undefined {
    return this.resident.get(id);
  }

  async execute(id: string, command: Command, context: CommandContext, options?: ExecuteOptions): Promise<CommandResult<Event>> {
    const actor = await this.get(id);
    try {
      return await actor.execute(command, context, options);
    } finally {
      // A new id whose first command stored nothing leaves no actor behind (no unbounded growth from refusals).
      if (actor.currentRevision === -1 && actor.idle && this.resident.get(id) === actor) this.resident.delete(id);
    }
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

  /** Drops idle actors: those unused for idleMs, then the longest idle beyond maxResident. */
  sweep(): void {
    const now = this.env.clock.now();
    const { idleMs, maxResident } = this.options;
    let dropped = 0;
    for (const [id, actor] of this.resident) {
      if (actor.idle && now - actor.lastUsed >= idleMs) {
        this.resident.delete(id);
        dropped++;
      }
    }
    if (this.resident.size > maxResident) {
      // Map order is load order; a pass in that order approximates least-recently-loaded first.
      const excess = [...this.resident.values()].filter((a) => a.idle).sort((a, b) => a.lastUsed - b.lastUsed);
      for (const actor of excess.slice(0, this.resident.size - maxResident)) {
        this.resident.delete(actor.id);
        dropped++;
      }
    }
    if (dropped > 0) {
      this.passivatedCount += dropped;
      this.options.logger.debug({ category: this.kind.category, passivated: dropped, resident: this.resident.size }, "passivated idle actors");
    }
  }

  private scheduleSweep(): void {
    if (this.stopped) return;
    this.sweepTimer = this.env.clock.setTimer(Math.max(1000, this.options.idleMs / 2), () => {
      this.sweep();
      this.scheduleSweep();
    });
  }

  stop(): void {
    this.stopped = true;
    this.sweepTimer?.cancel();
  }
}
