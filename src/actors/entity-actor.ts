import type { EventStore, ExpectedRevision, NewEvent, AppendResult } from "../events/store/event-store.ts";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../events/store/store-errors.ts";
import { ShoalError, unavailable } from "../errors/shoal-error.ts";
import type { Clock } from "./clock.ts";
import type { CommandContext } from "./command-context.ts";
import type { DeadlineScheduler } from "./deadline-scheduler.ts";
import { streamOf, type EntityKind } from "./entity-kind.ts";

export interface CommandResult<Event> {
  readonly events: readonly Event[];
  /** Store position of the last event appended, or undefined when nothing was appended. */
  readonly position: number | undefined;
  readonly revision: number;
  readonly note?: string;
}

export interface ExecuteOptions<State = unknown> {
  /** If-Match: refuse with PreconditionFailed unless the stream is at this revision. */
  readonly expectedRevision?: number;
  /**
   * Checked with the actor's state when the command reaches the front of the mailbox; false drops
   * it (e.g. a stale deadline).
   */
  readonly precondition?: (state: State) => boolean;
}

export interface ActorEnvironment {
  readonly store: EventStore;
  readonly clock: Clock;
  /** The one deadline heap: entities' deadlines, the registry's idle sweep, the pauses between re-appends. */
  readonly deadlines: DeadlineScheduler;
  readonly newEventId: () => string;
  /** Aborted when the host stops: a re-append waiting out its pause is tried at once, so its caller gets an answer. */
  readonly stopping?: AbortSignal;
}

/** A queued command, or a catch-up, with its caller's promise to settle. */
type Job<State, Command, Event> =
  | {
      readonly kind: "command";
      readonly command: Command;
      readonly context: CommandContext;
      readonly options: ExecuteOptions<State>;
      readonly resolve: (result: CommandResult<Event>) => void;
      readonly reject: (error: unknown) => void;
    }
  | { readonly kind: "catchUp"; readonly resolve: () => void; readonly reject: (error: unknown) => void };

const NO_OPTIONS: ExecuteOptions = Object.freeze({});

let lastTimeMs = Number.NaN;
let lastTime = "";
/** The ISO form of a host time; commands of one millisecond (many, under load) share one string. */
function isoTime(ms: number): string {
  if (ms !== lastTimeMs) {
    lastTime = new Date(ms).toISOString();
    lastTimeMs = ms;
  }
  return lastTime;
}

const MAX_CONFLICT_RETRIES = 3;
/**
 * Pauses before each re-append after the store said it was unavailable. Bounded, because the
 * caller (an HTTP request, a node's NATS request with its own timeout) is waiting; after the
 * last one the caller gets Unavailable and may retry later.
 */
const STORE_RETRY_DELAYS_MS = [100, 300, 900];

function withNote<Event>(result: CommandResult<Event>, note: string | undefined): CommandResult<Event> {
  return note === undefined ? result : { ...result, note };
}

/**
 * The single writer of one entity's stream: commands run one at a time (a mailbox); each is
 * decided on the current state, appended with the expected revision, and only then adopted.
 * Another writer's append (a second orchestrator on the same store) makes it catch up and
 * decide again.
 */
export class EntityActor<State, Command, Event, Refusal> {
  private current: State;
  private revision = -1;
  /** Commands (and catch-ups) waiting their turn, oldest first; one runs at a time. */
  private readonly waiting: Job<State, Command, Event>[] = [];
  private draining = false;
  private queued = 0;
  private readonly stream: string;
  /** The host's clock at the last command or load: passivation picks the longest idle. */
  lastUsed: number;

  constructor(
    private readonly kind: EntityKind<State, Command, Event, Refusal>,
    readonly id: string,
    private readonly env: ActorEnvironment,
  ) {
    this.current = kind.decider.initialState(id);
    this.lastUsed = env.clock.now();
    this.stream = streamOf(kind, id);
  }

  get state(): State {
    return this.current;
  }

  get currentRevision(): number {
    return this.revision;
  }

  /** No command waiting or running: the actor may be passivated. */
  get idle(): boolean {
    return this.queued === 0;
  }

  /** Reads its stream from where it is: the whole stream on first load, the missed tail after a conflict. */
  async catchUp(): Promise<void> {
    const recorded = await this.env.store.readStream(this.stream, { fromRevision: this.revision + 1 });
    for (const r of recorded) {
      this.current = this.kind.decider.evolve(this.current, this.kind.decode(r), r.time);
      this.revision = r.revision;
    }
  }

  /** Catches up with what other writers stored, in turn with its commands (never in the middle of one). */
  refresh(): Promise<void> {
    return new Promise<void>((resolve, reject) => this.enqueue({ kind: "catchUp", resolve, reject }));
  }

  execute(
    command: Command,
    context: CommandContext,
    options: ExecuteOptions<State> = NO_OPTIONS,
  ): Promise<CommandResult<Event>> {
    return new Promise<CommandResult<Event>>((resolve, reject) =>
      this.enqueue({ kind: "command", command, context, options, resolve, reject }),
    );
  }

  /**
   * The mailbox: a plain queue drained by one loop, rather than a chain of promises per command
   * (fewer allocations on the hot path). As before, a command starts in a later microtask than
   * the call that queued it, and `idle` is true again before its caller resumes.
   */
  private enqueue(job: Job<State, Command, Event>): void {
    this.queued++;
    this.waiting.push(job);
    if (!this.draining) {
      this.draining = true;
      queueMicrotask(this.drain);
    }
  }

  private readonly drain = async (): Promise<void> => {
    for (let job = this.waiting.shift(); job !== undefined; job = this.waiting.shift()) {
      try {
        if (job.kind === "catchUp") {
          await this.catchUp();
          job.resolve();
        } else job.resolve(await this.run(job.command, job.context, job.options));
      } catch (e) {
        job.reject(e);
      } finally {
        this.queued--;
      }
    }
    this.draining = false;
  };

  private async run(
    command: Command,
    context: CommandContext,
    options: ExecuteOptions<State>,
  ): Promise<CommandResult<Event>> {
    const { decider } = this.kind;
    const { clock } = this.env;
    this.lastUsed = clock.now();
    if (options.precondition && !options.precondition(this.state))
      return { events: [], position: undefined, revision: this.revision };
    for (let attempt = 0; ; attempt++) {
      if (options.expectedRevision !== undefined && options.expectedRevision !== this.revision) {
        throw new ShoalError({
          kind: "PreconditionFailed",
          message: `${this.kind.category} ${this.id} is at revision ${this.revision}, not ${options.expectedRevision}`,
        });
      }
      const now = clock.now();
      const decision = decider.decide(command, this.current, { now });
      if (!decision.ok) throw this.kind.refusalError(decision.refusal);
      if (decision.events.length === 0)
        return withNote({ events: [], position: undefined, revision: this.revision }, decision.note);

      const time = isoTime(now);
      const metadata = { time, ...context };
      let newEvents: NewEvent[];
      try {
        newEvents = decision.events.map((e) => this.kind.encode(e, metadata, this.env.newEventId()));
      } catch (e) {
        // Nothing is written, and the caller is not blamed for Shoal's own fault.
        throw new ShoalError({ kind: "Internal", message: (e as Error).message });
      }
      try {
        const expected: ExpectedRevision = this.revision === -1 ? "no_stream" : this.revision;
        let result: AppendResult;
        try {
          result = await this.env.store.append(this.stream, newEvents, expected);
        } catch (e) {
          if (!(e instanceof StoreUnavailableError)) throw e;
          result = await this.reappend(newEvents, expected);
        }
        let next = this.current;
        for (const e of decision.events) next = decider.evolve(next, e, time);
        this.current = next;
        this.revision = result.nextExpectedRevision;
        this.lastUsed = clock.now();
        return withNote({ events: decision.events, position: result.position, revision: this.revision }, decision.note);
      } catch (e) {
        if (!(e instanceof WrongExpectedRevisionError) || attempt >= MAX_CONFLICT_RETRIES) {
          // Contention between writers is Shoal's own business: the caller (a node, an operator
          // without If-Match) did nothing wrong and may simply try again.
          if (e instanceof WrongExpectedRevisionError)
            throw unavailable(`${this.kind.category} ${this.id} was changed concurrently; try again`, 1);
          throw e;
        }
        await this.catchUp();
      }
    }
  }

  /**
   * Re-appends the very same events (same ids, same expected revision) after the store said it
   * was unavailable: if an earlier attempt did commit and only its acknowledgement was lost, the
   * store recognises the ids and answers with the original result, so a committed write is
   * never reported as failed and never stored twice.
   */
  private async reappend(events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    for (let attempt = 0; ; attempt++) {
      const delay = STORE_RETRY_DELAYS_MS[attempt] as number;
      // On the one deadline heap, like every other wait of the host: a test's clock drives it.
      await this.env.deadlines.sleep(`re-append/${this.stream}`, delay, this.env.stopping);
      try {
        return await this.env.store.append(this.stream, events, expected);
      } catch (e) {
        if (!(e instanceof StoreUnavailableError) || attempt + 1 >= STORE_RETRY_DELAYS_MS.length) throw e;
      }
    }
  }
}
