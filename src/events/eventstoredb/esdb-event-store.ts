import { randomUUID } from "node:crypto";
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AppendExpectedRevision,
  type Position,
  type ResolvedEvent,
} from "@eventstore/db-client";
import type {
  AppendResult,
  CheckpointStore,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StoreSubscription,
} from "../store/event-store.ts";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../store/store-errors.ts";

const CHECKPOINT_PREFIX = "shoal-checkpoint-";

function toNumber(value: bigint): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new StoreUnavailableError({ reason: `position ${value} exceeds 2^53` });
  return n;
}

function toExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === "no_stream") return NO_STREAM;
  if (expected === "any") return ANY;
  if (expected === "stream_exists") return STREAM_EXISTS;
  return BigInt(expected);
}

function fromPosition(after: number | undefined): typeof START | Position {
  return after === undefined || after <= 0 ? START : { commit: BigInt(after), prepare: BigInt(after) };
}

function toRecorded(resolved: ResolvedEvent): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e || e.type.startsWith("$") || e.position === undefined) return undefined;
  const metadata = (e.metadata ?? {}) as Record<string, unknown>;
  return {
    id: e.id,
    type: e.type,
    stream: e.streamId,
    revision: toNumber(e.revision),
    position: toNumber(e.position.commit),
    time: typeof metadata.time === "string" ? metadata.time : e.created.toISOString(),
    data: e.isJson ? e.data : Buffer.from(e.data as Uint8Array).toString("base64"),
    metadata,
  };
}

function storeError(e: unknown): Error {
  if (e instanceof WrongExpectedRevisionError || e instanceof StoreUnavailableError) return e;
  return new StoreUnavailableError({ reason: e instanceof Error ? e.message : String(e) });
}

/** The production store: EventStoreDB (KurrentDB) over gRPC, chosen with EventStore.URL=esdb://… */
export class EsdbEventStore implements EventStore, CheckpointStore {
  private readonly client: EventStoreDBClient;
  private readonly trimmed = new Set<string>();

  constructor(readonly url: string) {
    try {
      this.client = EventStoreDBClient.connectionString(url);
    } catch (e) {
      throw new StoreUnavailableError({ reason: `invalid EventStore.URL ${url}: ${(e as Error).message}` });
    }
  }

  async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    try {
      const result = await this.client.appendToStream(
        stream,
        events.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data as never, metadata: e.metadata as never })),
        { expectedRevision: toExpected(expected) },
      );
      return {
        nextExpectedRevision: toNumber(result.nextExpectedRevision),
        position: result.position ? toNumber(result.position.commit) : 0,
      };
    } catch (e) {
      if (e instanceof WrongExpectedVersionError) {
        const actual = typeof e.actualVersion === "bigint" ? toNumber(e.actualVersion) : -1;
        throw new WrongExpectedRevisionError({ stream, expected, actual });
      }
      throw storeError(e);
    }
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(stream, {
        direction: FORWARDS,
        fromRevision: options.fromRevision === undefined ? START : BigInt(options.fromRevision),
        ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
      });
      for await (const resolved of read) {
        const e = toRecorded(resolved);
        if (e) out.push(e);
      }
    } catch (e) {
      if (e instanceof StreamNotFoundError) return [];
      throw storeError(e);
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    const after = options.after ?? 0;
    try {
      // ESDB reads $all from a position inclusively and counts system events in maxCount,
      // so read on until enough user events past `after` are collected.
      const read = this.client.readAll({ direction: FORWARDS, fromPosition: fromPosition(after) });
      for await (const resolved of read) {
        const e = toRecorded(resolved);
        if (!e || e.position <= after) continue;
        out.push(e);
        if (options.maxCount !== undefined && out.length >= options.maxCount) break;
      }
    } catch (e) {
      throw storeError(e);
    }
    return out;
  }

  subscribeToAll(options: { readonly after?: number }, handler: (event: RecordedEvent) => Promise<void> | void): StoreSubscription {
    const after = options.after ?? 0;
    const subscription = this.client.subscribeToAll({ fromPosition: fromPosition(after), filter: excludeSystemEvents() });
    let stopped = false;
    const done = (async () => {
      try {
        for await (const resolved of subscription) {
          if (stopped) return;
          const e = toRecorded(resolved);
          if (e && e.position > after) await handler(e);
        }
      } catch (e) {
        if (!stopped) throw storeError(e);
      }
    })();
    done.catch(() => undefined);
    return {
      done,
      async stop() {
        stopped = true;
        await subscription.unsubscribe();
        await done.catch(() => undefined);
      },
    };
  }

  async load(name: string): Promise<number | undefined> {
    try {
      const read = this.client.readStream(CHECKPOINT_PREFIX + name, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
      for await (const resolved of read) {
        const data = resolved.event?.data as { position?: unknown } | undefined;
        if (typeof data?.position === "number") return data.position;
      }
    } catch (e) {
      if (e instanceof StreamNotFoundError) return undefined;
      throw storeError(e);
    }
    return undefined;
  }

  async save(name: string, position: number): Promise<void> {
    const stream = CHECKPOINT_PREFIX + name;
    try {
      if (!this.trimmed.has(stream)) {
        // Only the latest checkpoint matters; let the server scavenge the rest.
        await this.client.setStreamMetadata(stream, { maxCount: 1 });
        this.trimmed.add(stream);
      }
      await this.client.appendToStream(stream, jsonEvent({ id: randomUUID(), type: "CheckpointStored", data: { position } }));
    } catch (e) {
      throw storeError(e);
    }
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}
