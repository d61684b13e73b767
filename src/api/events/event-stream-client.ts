import type { Socket } from "node:net";
import type { Logger } from "pino";
import type { Clock } from "../../actors/clock.ts";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { EventFilter, EventStore } from "../../events/store/event-store.ts";
import type { EventStreamHub, StreamSubscriber } from "../../projections/event-stream/event-stream-hub.ts";
import { resumeFrame } from "../../projections/event-stream/sse-frame.ts";

/** Events a catching-up client reads from the store at a time (and at most holds unsent). */
export const CATCH_UP_PAGE = 512;
/** How long a client catching up may take to read a page before it gives its turn to the next in line. */
export const CATCH_UP_TURN_MS = 5_000;
/** How long a client that was sent its last message may take to read it before its connection is dropped. */
export const CLOSE_GRACE_MS = 5_000;

export interface EventStreamClientOptions {
  readonly id: number;
  readonly hub: EventStreamHub;
  readonly store: EventStore;
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Past this many bytes queued on its connection, the client is cut off with where to resume. */
  readonly clientBufferBytes: number;
  /** Counts the clients cut off for not reading. */
  readonly onCutOff?: () => void;
}

/**
 * One HTTP client of the event stream. It catches up from the store in its turn (the hub's catchUps: a few clients at
 * a time), a page at a time and never more than one page ahead of what its connection took (a client that stops
 * reading then waits, holding that page, and gives its turn to the next), until its cursor reaches the hub's ring;
 * from then on it is live, and the hub hands it each new event it selects. Whatever it was sent live is queued on its
 * connection: when more than its bound is still waiting there as new events come, it gets a last `resume` message
 * saying where to go on from and is closed instead, so a client that does not read costs at most its bound and one
 * batch of the hub, and the hub never waits for it.
 */
export class EventStreamClient implements StreamSubscriber {
  live = false;
  private position: number;
  private done = false;
  private readonly closeKey: string;

  constructor(
    /** The request's connection, taken over from the HTTP server (the route hijacked the reply). */
    private readonly res: Socket,
    readonly filter: EventFilter,
    readonly filterKey: string,
    after: number,
    private readonly options: EventStreamClientOptions,
  ) {
    this.position = after;
    this.closeKey = `event-stream/${options.id}/close`;
  }

  get cursor(): number {
    return this.position;
  }

  get buffered(): number {
    return this.done ? 0 : this.res.writableLength;
  }

  /** Sends the headers, then the events after the start: from the store first, then live. */
  start(): void {
    const { res, options } = this;
    // The response written on the connection itself, without chunked framing: each batch's frames, shared by every
    // client, go out in one write, and nothing else is queued per write (the event stream's cost is these writes).
    // The body ends when the connection does.
    res.write(
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\n" +
        "x-accel-buffering: no\r\nconnection: close\r\n\r\n" +
        // An id with no data: a client (an EventSource) that reconnects before any event comes resumes from the start.
        `: events after ${this.position}\nid: ${this.position}\n\n`,
    );
    res.once("close", () => {
      this.done = true;
      this.live = false;
      options.hub.detach(this);
      options.deadlines.cancel(this.closeKey);
    });
    options.hub.attach(this);
    void this.catchUp();
  }

  deliver(chunk: Buffer | undefined, through: number): void {
    if (this.done) return;
    // Judged on what it left waiting, not on the new batch: a reading client is never cut off for a large batch.
    if (chunk !== undefined && this.res.writableLength > this.options.clientBufferBytes) return this.cutOff();
    if (chunk !== undefined) this.res.write(chunk);
    if (through > this.position) this.position = through;
  }

  keepAlive(frame: Buffer): void {
    // Something still queued will reach the client (or its bound will): a comment would only add to it.
    if (this.done || this.res.writableLength > 0) return;
    this.res.write(frame);
  }

  end(reason: string): void {
    if (this.done) return;
    this.done = true;
    this.live = false;
    const { res, options } = this;
    options.hub.detach(this);
    res.end(resumeFrame(this.position, reason));
    // A connection that does not read would never finish the end: it is dropped after the grace.
    options.deadlines.set(this.closeKey, options.clock.now() + CLOSE_GRACE_MS, () => res.destroy());
  }

  private cutOff(): void {
    this.options.logger.info(
      { client: this.options.id, after: this.position, buffered: this.res.writableLength },
      "event stream client does not read; cut off with where to resume",
    );
    this.options.onCutOff?.();
    this.end(`the client did not read: more than ${this.options.clientBufferBytes} bytes were waiting for it`);
  }

  private async catchUp(): Promise<void> {
    const { hub } = this.options;
    let turn = false;
    try {
      while (!this.done) {
        if (this.position >= hub.floor) {
          // Every stored event after the cursor is in the ring from here on: no read can fall between.
          this.live = true;
          this.deliver(hub.framesAfter(this.position, this.filter), hub.head);
          return;
        }
        if (!turn) {
          // In line with the other clients reading the store; meanwhile it is sent nothing but keep-alives.
          await hub.catchUps.take();
          turn = true;
          continue;
        }
        const page = await this.readPage();
        if (this.done) return;
        const { frames } = page;
        const flowing = frames.length === 0 || this.res.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
        // Moved with the write, in one step: a last message sent at any other moment names where the sent ones end.
        this.position = page.reached;
        // One page at most waits on the connection: the next is read once it took this one. A connection that takes
        // it slowly gives its turn to the next in line and, once it took it, waits in line again.
        if (!flowing && !(await this.drained(CATCH_UP_TURN_MS))) {
          hub.catchUps.release();
          turn = false;
          await this.drained();
        }
      }
    } catch (err) {
      this.options.logger.warn({ err, client: this.options.id, after: this.position }, "event stream catch-up failed");
      this.end(`the store could not be read: ${(err as Error).message}`);
    } finally {
      if (turn) hub.catchUps.release();
    }
  }

  /** The next page of the store after the cursor, as messages, and the position they cover the store through. */
  private async readPage(): Promise<{ readonly frames: Buffer[]; readonly reached: number }> {
    const { hub, store } = this.options;
    const through = hub.head;
    const page = await store.readFiltered(this.filter, { after: this.position, through, maxCount: CATCH_UP_PAGE });
    if (this.done) return { frames: [], reached: this.position };
    const full = page.events.length === CATCH_UP_PAGE;
    const reached = full ? page.events.at(-1)!.position : page.scannedThrough;
    // A store that got nowhere has answered all there is through the bound asked for.
    return { frames: page.events.map((e) => hub.frameOf(e)), reached: reached > this.position ? reached : through };
  }

  /** True once the connection took what was queued, or closed; false when `withinMs` passed first. */
  private drained(withinMs?: number): Promise<boolean> {
    const { res, options } = this;
    const key = `event-stream/${options.id}/drain`;
    return new Promise((resolve) => {
      const settle = (took: boolean) => {
        res.off("drain", go);
        res.off("close", go);
        options.deadlines.cancel(key);
        resolve(took);
      };
      const go = () => settle(true);
      res.on("drain", go);
      res.on("close", go);
      if (withinMs !== undefined) options.deadlines.set(key, options.clock.now() + withinMs, () => settle(false));
    });
  }
}
