import type { AppendResult, EventStore, NewEvent } from "../events/store/event-store.ts";
import { WrongExpectedRevisionError } from "../events/store/store-errors.ts";

/** How often a record goes again after other writers took its revision, before its caller hears of the conflict. */
const CONFLICTS_BEFORE_GIVING_UP = 5;

interface Pending {
  readonly event: NewEvent;
  /** The lowest expected revision it was sent at before (none: never sent): if it is stored, it is after that. */
  since: number | undefined;
  conflicts: number;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * A workflow's own stream (`workflow-<name>`), written one record per append, each with the stream's exact expected
 * revision, never "any": under "any" KurrentDB takes a record sent again for a new one once its id has left the
 * server's cache of recent writes, and stores it twice. At an exact revision every record lands where it was expected
 * (and one sent again at the same revision is recognised from the server's index); a refusal says that another write
 * came first, and that write is read.
 *
 * The revision is read once, at the first append, and kept as appends land. Appends go in rounds, one after another:
 * a round sends everything queued since the last one, in order, each at the revision the one before it leaves, so the
 * store takes them in one group commit. A record refused for a wrong expected revision (another writer appended, or a
 * record whose acknowledgement was lost did land) is looked for in what the stream gained since: there, it is done;
 * else it goes again in the next round, at the new revision, after the records of its round that were stored (records
 * in flight together have no order among them). A record whose append failed otherwise, its outcome unknown, is
 * remembered with the revision it was sent at: appended again, it is looked for first.
 *
 * A record is not to be appended again while it is in flight, nor once it was acknowledged: at a newer revision SQLite
 * refuses it (event ids are unique) and KurrentDB stores it twice. Its writers remember what they stored.
 */
export class WorkflowStream {
  /** The revision of the stream's last event as far as this writer knows (-1: none); undefined until read. */
  private revision: number | undefined;
  private queue: Pending[] = [];
  private running = false;
  /** Records whose append failed with an unknown outcome: the revision they were sent at. */
  private readonly unsure = new Map<string, number>();

  constructor(
    private readonly store: EventStore,
    readonly name: string,
  ) {}

  /**
   * Other writers appended meanwhile, maybe many records (a duty held elsewhere): the next round reads the revision
   * again, rather than learn it from a conflict and read everything it missed.
   */
  forgetRevision(): void {
    this.revision = undefined;
  }

  /** Resolves once the record is stored: now, or before (a retry of a write that landed). */
  append(event: NewEvent): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ event, since: this.unsure.get(event.id), conflicts: 0, resolve, reject });
      if (!this.running) void this.run();
    });
  }

  private async run(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const round = this.queue;
      this.queue = [];
      const again = await this.round(round);
      // What conflicted goes first, in its order, ahead of what was queued meanwhile.
      this.queue = [...again, ...this.queue];
    }
    this.running = false;
  }

  /** Sends the round's records (those not found stored); never throws. The records to send again. */
  private async round(round: readonly Pending[]): Promise<Pending[]> {
    let open: readonly Pending[] = round;
    try {
      this.revision ??= await this.store.streamRevision(this.name);
      open = await this.withoutStored(round);
    } catch (err) {
      for (const p of open) p.reject(err);
      return [];
    }
    const base = this.revision ?? -1;
    const outcomes = await Promise.allSettled(
      // A revision is 0-based; before the first there is no stream (KurrentDB's client takes no -1).
      open.map((p, i) => this.store.append(this.name, [p.event], base + i === -1 ? "no_stream" : base + i)),
    );
    const again: Pending[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      const p = open[i] as Pending;
      const expected = base + i;
      if (outcome.status === "fulfilled") {
        this.learn(outcome.value.nextExpectedRevision);
        this.unsure.delete(p.event.id);
        p.resolve(outcome.value);
        continue;
      }
      const err: unknown = outcome.reason;
      p.since = Math.min(p.since ?? expected, expected);
      if (err instanceof WrongExpectedRevisionError) {
        this.learn(err.actual);
        if (++p.conflicts <= CONFLICTS_BEFORE_GIVING_UP) {
          again.push(p);
          continue;
        }
      } else this.unsure.set(p.event.id, p.since);
      p.reject(err);
    }
    return again;
  }

  /**
   * The records of `pending` not stored: those sent before are looked for in the stream after the lowest revision
   * they were sent at (and the others with them, for nothing more); those found are resolved where they are.
   */
  private async withoutStored(pending: readonly Pending[]): Promise<readonly Pending[]> {
    let from: number | undefined;
    for (const p of pending) if (p.since !== undefined) from = Math.min(from ?? p.since, p.since);
    if (from === undefined) return pending;
    const stored = await this.store.readStream(this.name, { fromRevision: from + 1 });
    this.learn(stored.at(-1)?.revision ?? -1);
    const byId = new Map(stored.map((e) => [e.id, e]));
    return pending.filter((p) => {
      const found = byId.get(p.event.id);
      if (found === undefined) return true;
      this.unsure.delete(p.event.id);
      p.resolve({ nextExpectedRevision: found.revision, position: found.position });
      return false;
    });
  }

  /** Revisions only grow: the newest heard of is the stream's. */
  private learn(revision: number): void {
    this.revision = Math.max(this.revision ?? -1, revision);
  }
}
