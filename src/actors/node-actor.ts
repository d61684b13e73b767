import { randomUUID } from "node:crypto";
import { decideNode } from "../../machines/node/decide-node.ts";
import type { NodeCommand, NodeRefusal } from "../../machines/node/node-commands.ts";
import { applyNodeEvent, initialNode } from "../../machines/node/node-evolve.ts";
import type { NodeSnapshot } from "../../machines/node/node-machine.ts";
import { InvalidEventError, decodeNodeEvent, encodeNodeEvent } from "../events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../events/catalog/node-events.ts";
import type { AppendResult, EventStore, ExpectedRevision, NewEvent } from "../events/store/event-store.ts";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../events/store/store-errors.ts";
import { nodeStream } from "../events/streams.ts";
import { ShoalError, conflict, forbidden, notFound, unavailable } from "../errors/shoal-error.ts";
import type { Clock } from "./clock.ts";
import type { CommandContext } from "./command-context.ts";

export interface CommandResult {
  readonly events: readonly NodeEvent[];
  /** Store position of the last event appended, or undefined when nothing was appended. */
  readonly position: number | undefined;
  readonly revision: number;
  readonly note?: string;
}

export interface ExecuteOptions {
  /** If-Match: refuse with PreconditionFailed unless the stream is at this revision. */
  readonly expectedRevision?: number;
  /** Checked when the command reaches the front of the mailbox; false drops it (e.g. a stale deadline). */
  readonly precondition?: () => boolean;
}

const MAX_CONFLICT_RETRIES = 3;
/**
 * Pauses before each re-append after the store said it was unavailable. Bounded, because the
 * caller (an HTTP request, a node's NATS request with its own timeout) is waiting; after the
 * last one the caller gets Unavailable and may retry later.
 */
const STORE_RETRY_DELAYS_MS = [100, 300, 900];

function refusalError(refusal: NodeRefusal): ShoalError {
  switch (refusal.code) {
    case "NotFound":
      return notFound(refusal.message);
    case "Conflict":
      return conflict(refusal.message);
    case "Rejected":
      return forbidden(refusal.message);
  }
}

/**
 * The single writer for one node's stream: decide with the pure machine, append with the
 * expected revision, and only then adopt the new state. Commands run one at a time (mailbox).
 */
export class NodeActor {
  private snapshot: NodeSnapshot;
  private revision = -1;
  private mailbox: Promise<unknown> = Promise.resolve();

  constructor(
    readonly nodeId: string,
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {
    this.snapshot = initialNode(nodeId);
  }

  get state(): NodeSnapshot {
    return this.snapshot;
  }

  get currentRevision(): number {
    return this.revision;
  }

  /** Recovery: events read from the store, in order. */
  applyStored(event: NodeEvent, revision: number): void {
    this.snapshot = applyNodeEvent(this.snapshot, event);
    this.revision = revision;
  }

  execute(command: NodeCommand, context: CommandContext, options: ExecuteOptions = {}): Promise<CommandResult> {
    const run = this.mailbox.then(() => this.run(command, context, options));
    this.mailbox = run.catch(() => undefined);
    return run;
  }

  private async run(command: NodeCommand, context: CommandContext, options: ExecuteOptions): Promise<CommandResult> {
    if (options.precondition && !options.precondition()) return { events: [], position: undefined, revision: this.revision };
    for (let attempt = 0; ; attempt++) {
      if (options.expectedRevision !== undefined && options.expectedRevision !== this.revision) {
        throw new ShoalError({
          kind: "PreconditionFailed",
          message: `node ${this.nodeId} is at revision ${this.revision}, not ${options.expectedRevision}`,
        });
      }
      const decision = decideNode(this.snapshot, command);
      if (!decision.ok) throw refusalError(decision.refusal);
      const note = decision.note === undefined ? {} : { note: decision.note };
      if (decision.events.length === 0) return { events: [], position: undefined, revision: this.revision, ...note };

      const time = new Date(this.clock.now()).toISOString();
      const metadata = { time, ...context };
      let newEvents: NewEvent[];
      try {
        newEvents = decision.events.map((e) => encodeNodeEvent(e, metadata, randomUUID()));
      } catch (e) {
        // A fault in Shoal (or input that slipped past validation), never the caller's: nothing is written.
        if (e instanceof InvalidEventError) throw new ShoalError({ kind: "Internal", message: e.message });
        throw e;
      }
      try {
        const result = await this.appendRetrying(newEvents, this.revision === -1 ? "no_stream" : this.revision);
        for (const e of decision.events) this.snapshot = applyNodeEvent(this.snapshot, e);
        this.revision = result.nextExpectedRevision;
        return { events: decision.events, position: result.position, revision: this.revision, ...note };
      } catch (e) {
        // Another writer (a second orchestrator on the same store) got there first: catch up, decide again.
        if (!(e instanceof WrongExpectedRevisionError) || attempt >= MAX_CONFLICT_RETRIES) {
          // Contention between writers is Shoal's own business: the caller (a node, an operator
          // without If-Match) did nothing wrong and may simply try again.
          if (e instanceof WrongExpectedRevisionError) throw unavailable(`node ${this.nodeId} was changed concurrently; try again`, 1);
          throw e;
        }
        await this.catchUp();
      }
    }
  }

  /**
   * Re-appends the very same events (same ids, same expected revision) while the store is
   * unavailable: if an earlier attempt did commit and only its acknowledgement was lost, the
   * store recognises the ids and answers with the original result, so a committed write is
   * never reported as failed and never stored twice.
   */
  private async appendRetrying(events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.store.append(nodeStream(this.nodeId), events, expected);
      } catch (e) {
        const delay = STORE_RETRY_DELAYS_MS[attempt];
        if (!(e instanceof StoreUnavailableError) || delay === undefined) throw e;
        // The host's clock, like every other wait of the actor: tests fake it, nothing else.
        await new Promise<void>((resolve) => this.clock.setTimer(delay, resolve));
      }
    }
  }

  private async catchUp(): Promise<void> {
    const events = await this.store.readStream(nodeStream(this.nodeId), { fromRevision: this.revision + 1 });
    for (const recorded of events) this.applyStored(decodeNodeEvent(recorded), recorded.revision);
  }
}
