import type { Logger } from "pino";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { EventFilter, RecordedEvent } from "../../events/store/event-store.ts";
import { EncodedEvents } from "../encoded-events.ts";
import type { EventEnvelope } from "../event-envelope.ts";
import { type FilterFacts, filterFactsOf, matchesEventFilter } from "../event-feed/event-filter-match.ts";
import type { Processor } from "../processor.ts";
import { CatchUpTurns } from "./catch-up-turns.ts";
import { KEEP_ALIVE_FRAME } from "./sse-frame.ts";

/** One event of the ring: its frame, made once for every client, and what filters look at. */
interface RingEntry {
  readonly position: number;
  readonly facts: FilterFacts;
  readonly frame: Buffer;
}

/** A client of the hub, as the hub sees it: where it is, what it asks for, and how it takes frames. */
export interface StreamSubscriber {
  readonly filter: EventFilter;
  /** Subscribers with the same key ask for the same selection: a batch's frames for them are joined once. */
  readonly filterKey: string;
  /** Every selected event up to here was handed to it. */
  readonly cursor: number;
  /** Live: the hub hands it every new event (catching up: it reads the store and asks the ring itself). */
  readonly live: boolean;
  /** The selected frames after its cursor through `through` (none, possibly), written without waiting. */
  deliver(chunk: Buffer | undefined, through: number): void;
  keepAlive(frame: Buffer): void;
  /** Bytes sent to it that its connection still holds. */
  readonly buffered: number;
  /** Sent away (the orchestrator stops, it holds the most of all): a last message saying where to resume, the end. */
  end(reason: string): void;
}

export interface EventStreamHubOptions {
  /** The store's head when the hub starts: it follows only what is appended after. */
  readonly startAt: number;
  /** The ring keeps at least the newest events whose frames fit in this many bytes. */
  readonly ringBytes: number;
  readonly keepAliveMs: number;
  /** What every client's connection holds together, at most: past it, the client holding the most is cut off. */
  readonly maxBufferedBytes: number;
  /** Told of each client cut off for that. */
  readonly onCutOff?: () => void;
  /** Each event's message, shared with the NATS publisher; without it the hub encodes each event itself. */
  readonly encoded?: EncodedEvents;
  /** Clients catching up from the store at once, at most; the others wait their turn. Without it: all at once. */
  readonly maxCatchUps?: number;
  readonly deadlines: DeadlineScheduler;
  readonly logger: Logger;
}

const KEEP_ALIVE = "event-stream/keep-alive";

/**
 * The HTTP event stream's one follower of the store (docs/audit.md, The event stream): a processor that frames each
 * new event once and keeps the newest in a ring bounded in bytes, then hands each live client what its filter
 * selects. It never waits for a client: a write is queued on the client's socket, and the client cuts itself off
 * when its queue passes its bound. Every stored position in (floor, head] is in the ring, so a client that caught up
 * from the store past the floor switches to live from the ring with no gap and no duplicate.
 */
export class EventStreamHub implements Processor {
  readonly name = "event stream";
  private ring: RingEntry[] = [];
  /** Index of the oldest entry still held (entries before it are dropped lazily). */
  private first = 0;
  private ringBytes = 0;
  private floorPosition: number;
  private headPosition: number;
  private readonly subscribers = new Set<StreamSubscriber>();
  private cancelKeepAlive: (() => void) | undefined;
  private closed = false;
  private readonly encoded: EncodedEvents;
  /** Whose turn it is to catch up from the store. */
  readonly catchUps: CatchUpTurns;

  constructor(private readonly options: EventStreamHubOptions) {
    this.floorPosition = this.headPosition = options.startAt;
    this.encoded = options.encoded ?? new EncodedEvents(0);
    this.catchUps = new CatchUpTurns(options.maxCatchUps ?? Infinity);
  }

  /** Where it starts, for the processor host: the store's head at start, never a checkpoint. */
  readonly checkpoints = {
    load: (): Promise<number> => Promise.resolve(this.options.startAt),
    save: (): Promise<void> => Promise.resolve(),
  };

  /** The newest position the hub has framed. */
  get head(): number {
    return this.headPosition;
  }

  /** Every stored event after this position, through the head, is in the ring. */
  get floor(): number {
    return this.floorPosition;
  }

  get clients(): number {
    return this.subscribers.size;
  }

  get bufferedRingBytes(): number {
    return this.ringBytes;
  }

  /** What every client's connection holds, together. */
  get bufferedClientBytes(): number {
    let total = 0;
    for (const s of this.subscribers) total += s.buffered;
    return total;
  }

  attach(subscriber: StreamSubscriber): void {
    if (this.closed) throw new Error("the event stream hub is closed");
    this.subscribers.add(subscriber);
    this.cancelKeepAlive ??= this.options.deadlines.every(KEEP_ALIVE, this.options.keepAliveMs, () => {
      for (const s of this.subscribers) s.keepAlive(KEEP_ALIVE_FRAME);
    });
  }

  detach(subscriber: StreamSubscriber): void {
    this.subscribers.delete(subscriber);
    if (this.subscribers.size === 0) {
      this.cancelKeepAlive?.();
      this.cancelKeepAlive = undefined;
    }
  }

  /** The event's message, as every client is sent it (a client catching up from the store asks here). */
  frameOf(e: RecordedEvent): Buffer {
    return this.encoded.frame(e);
  }

  /** The frames of the ring after `after` that `filter` selects, joined (undefined: none). */
  framesAfter(after: number, filter: EventFilter): Buffer | undefined {
    return this.join(this.indexAfter(after), this.ring.length, (e) => matchesEventFilter(e.facts, filter));
  }

  handle(batch: readonly EventEnvelope[]): void {
    const last = batch.at(-1);
    if (last === undefined) return;
    if (this.subscribers.size === 0) {
      // Nobody to frame for: a client that comes reads the store up to here first.
      this.headPosition = this.floorPosition = last.position;
      this.ring = [];
      this.first = 0;
      this.ringBytes = 0;
      return;
    }
    const from = this.ring.length;
    for (const envelope of batch) {
      const recorded = envelope.recorded;
      const frame = this.encoded.frame(recorded);
      this.ring.push({ position: recorded.position, facts: filterFactsOf(recorded), frame });
      this.ringBytes += frame.length;
    }
    const before = this.headPosition;
    this.headPosition = last.position;
    this.deliver(from, before);
    this.trim();
  }

  /** Every client gets its last message and its end; nothing attaches after. */
  close(reason: string): void {
    this.closed = true;
    for (const s of [...this.subscribers]) s.end(reason);
    this.subscribers.clear();
    this.cancelKeepAlive?.();
    this.cancelKeepAlive = undefined;
  }

  private deliver(from: number, before: number): void {
    // Live clients were at the head before the batch: one chunk per selection serves all of them.
    const chunks = new Map<string, Buffer | undefined>();
    for (const s of [...this.subscribers]) {
      if (!s.live || s.cursor >= this.headPosition) continue;
      if (s.cursor !== before) {
        // Not where the others are (it started past events the hub had yet to see): its own chunk.
        s.deliver(this.framesAfter(s.cursor, s.filter), this.headPosition);
        continue;
      }
      if (!chunks.has(s.filterKey))
        chunks.set(
          s.filterKey,
          this.join(from, this.ring.length, (e) => matchesEventFilter(e.facts, s.filter)),
        );
      s.deliver(chunks.get(s.filterKey), this.headPosition);
    }
    this.bound();
  }

  /** Clients that read slowly, many at once, within the bound of them all: those holding the most go first. */
  private bound(): void {
    let total = this.bufferedClientBytes;
    if (total <= this.options.maxBufferedBytes) return;
    const heaviest = [...this.subscribers].sort((a, b) => b.buffered - a.buffered);
    for (const s of heaviest) {
      if (total <= this.options.maxBufferedBytes) return;
      total -= s.buffered;
      this.options.onCutOff?.();
      this.options.logger.info(
        { after: s.cursor, buffered: s.buffered, total },
        "event stream clients hold too much together; the one holding the most is cut off",
      );
      s.end(`the clients together did not read: more than ${this.options.maxBufferedBytes} bytes were waiting`);
    }
  }

  private join(from: number, to: number, selected: (e: RingEntry) => boolean): Buffer | undefined {
    const frames: Buffer[] = [];
    for (let i = from; i < to; i++) {
      const entry = this.ring[i] as RingEntry;
      if (selected(entry)) frames.push(entry.frame);
    }
    if (frames.length === 0) return undefined;
    return frames.length === 1 ? frames[0] : Buffer.concat(frames);
  }

  /** The ring index of the first entry after `position` (the ring's length when there is none). */
  private indexAfter(position: number): number {
    let lo = this.first;
    let hi = this.ring.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.ring[mid] as RingEntry).position <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops the oldest frames past the bound. */
  private trim(): void {
    while (this.ringBytes > this.options.ringBytes && this.first < this.ring.length) {
      const entry = this.ring[this.first] as RingEntry;
      this.ringBytes -= entry.frame.length;
      this.floorPosition = entry.position;
      this.first++;
    }
    if (this.first > 4096 && this.first * 2 > this.ring.length) {
      this.ring = this.ring.slice(this.first);
      this.first = 0;
    }
  }
}
