import { existsSync } from "node:fs";
import { randomUUID } from "node:crypto";
import {
  ANY,
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  jsonEvent,
  type AppendStreamState,
  type Filter,
  type Position,
  type ResolvedEvent,
} from "@kurrent/kurrentdb-client";
import type {
  AppendResult,
  CheckpointStore,
  EventFilter,
  EventStore,
  ExpectedRevision,
  FilteredPage,
  NewEvent,
  PositionBounds,
  ReadAllOptions,
  ReadFilteredOptions,
  ReadAllPagesOptions,
  ReadStreamOptions,
  RecordedEvent,
  StoreSubscription,
} from "../store/event-store.ts";
import { checkFilteredRead, matchesFilter, matchesNothing } from "../store/event-filter.ts";
import { readAllPagesInline } from "../store/read-all-pages.ts";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../store/store-errors.ts";
import { StartupError } from "../../errors/startup-error.ts";
import { redactCredentialsIn, redactUrl } from "../../security/redact-url.ts";
import { leaveOutIpServernames } from "./ip-servername.ts";
import { serverFilterFor } from "./esdb-server-filter.ts";
import { esdbStoreError } from "./esdb-store-error.ts";
import { kurrentConnectionProblem } from "./kurrent-connection-problem.ts";
import { checkServerVersion } from "./kurrent-server-version.ts";

const CHECKPOINT_PREFIX = "shoal-checkpoint-";
export const CHECKPOINT_TYPE = "CheckpointStored";
/**
 * The server-side filter on every read of $all and every subscription: no system events ($…)
 * and no checkpoints. A checkpoint delivered to the subscription that wrote it would make it
 * save another, for ever, and the NATS publisher would send them out.
 */
export const USER_EVENT_TYPES = `^(?!\\$|${CHECKPOINT_TYPE}$)`;
const READ_ALL_PAGE = 512;
/** Events a filtered page looks at, by default, before it ends early with a cursor; actor and time are checked here. */
export const SCAN_BUDGET = 20_000;
/** What every subscription asks the server for: USER_EVENT_TYPES, so its own checkpoint saves never come back to it. */
export const SUBSCRIPTION_FILTER = eventTypeFilter({ regex: USER_EVENT_TYPES });

/** The client-side second guard: the same rule, plus the checkpoint streams themselves. */
function isBookkeeping(type: string, stream: string): boolean {
  return (
    type.startsWith("$") || type === CHECKPOINT_TYPE || stream.startsWith(CHECKPOINT_PREFIX) || stream.startsWith("$")
  );
}

function toNumber(value: bigint): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new StoreUnavailableError({ reason: `position ${value} exceeds 2^53` });
  return n;
}

function toExpected(expected: ExpectedRevision): AppendStreamState {
  if (expected === "no_stream") return NO_STREAM;
  if (expected === "any") return ANY;
  if (expected === "stream_exists") return STREAM_EXISTS;
  return BigInt(expected);
}

/** Metadata that lets the server scavenge all but the newest event of a bookkeeping stream. */
const KEEP_LATEST = { maxCount: 1 } as const;
/** The stream the start-up write check appends to (one event kept). */
export const PROBE_STREAM = `${CHECKPOINT_PREFIX}writable-check`;

function fromPosition(after: number | undefined): typeof START | Position {
  return after === undefined || after <= 0 ? START : { commit: BigInt(after), prepare: BigInt(after) };
}

function toRecorded(resolved: ResolvedEvent): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e || isBookkeeping(e.type, e.streamId) || e.position === undefined) return undefined;
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

/**
 * The events of a read, read to its end even when the caller leaves early: leaving would reset
 * the HTTP/2 stream while the server still sends, and the client's connection gives up after
 * enough such resets (a page of a filtered read leaves early every time), failing every read on it.
 */
async function* readToTheEnd<T>(read: AsyncIterable<T>): AsyncGenerator<T> {
  const it = read[Symbol.asyncIterator]();
  let ended = false;
  try {
    for (;;) {
      const next = await it.next().catch((e: unknown) => {
        ended = true;
        throw e;
      });
      if (next.done) {
        ended = true;
        return;
      }
      yield next.value;
    }
  } finally {
    while (!ended) ended = (await it.next()).done === true;
  }
}

/** Characters a user and password in EventStore.URL are made of: those a URL never escapes. */
const URL_SAFE_LOGIN = /^[A-Za-z0-9._~-]+(?::[A-Za-z0-9._~-]*)?$/;
/** The connection string's options the client knows, as it compares them: lower case, without - and _. */
const KNOWN_OPTIONS = [
  "tls",
  "tlsCAFile",
  "tlsVerifyCert",
  "userCertFile",
  "userKeyFile",
  "nodePreference",
  "maxDiscoverAttempts",
  "discoveryInterval",
  "gossipTimeout",
  "connectionName",
  "defaultDeadline",
  "throwOnAppendFailure",
  "keepAliveInterval",
  "keepAliveTimeout",
];
const flat = (key: string) => key.trim().toLowerCase().replace(/[_-]/g, "");
const FILE_OPTIONS = new Set(["tlsCAFile", "userCertFile", "userKeyFile"].map(flat));
const decodedOrAsIs = (value: string) => {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
};

/**
 * Why `url` would not be used as written, or undefined; said before the client sees it. The client decodes
 * percent-escapes in the user and password for its appends, but its native bridge (reads) sends them as written,
 * escapes and all, and cannot parse an unescaped / or ?: only characters that need no escape mean the same password
 * to both. And the client prints the whole URL, password included, on stderr for an option it does not know.
 */
function urlProblem(url: string): string | undefined {
  const scheme = url.indexOf("://");
  if (scheme < 0) return undefined;
  // Before the query, whose file paths may hold an @.
  const [hosts = "", query] = url.slice(scheme + 3).split("?", 2);
  const at = hosts.lastIndexOf("@");
  if (at >= 0 && !URL_SAFE_LOGIN.test(hosts.slice(0, at)))
    return (
      `the user and password in EventStore.URL ${redactUrl(url)} may be made of letters, digits and - . _ ~ only: ` +
      "the KurrentDB client's reads take them as written, percent-escapes included, so they would log in with " +
      "another password than its appends. Give the user such a password (openssl rand -hex 32 makes one)"
    );
  // The client reads `user@host` as a host named so, and fails later with a name it cannot resolve.
  if (at >= 0 && !hosts.slice(0, at).includes(":"))
    return (
      `EventStore.URL ${redactUrl(url)} names a user without a password: ` +
      "give both, kurrentdb://USER:PASSWORD@host:2113?…"
    );
  const known = new Set(KNOWN_OPTIONS.map(flat));
  for (const pair of (query ?? "").split("&")) {
    const key = pair.split("=")[0]!;
    if (key !== "" && !known.has(flat(key)))
      return `EventStore.URL ${redactUrl(url)}: unknown option ${JSON.stringify(key)}; known: ${KNOWN_OPTIONS.join(", ")}`;
    // The client says only "File was not found", naming neither the option nor the path.
    const file = decodedOrAsIs(pair.slice(key.length + 1));
    if (FILE_OPTIONS.has(flat(key)) && file !== "" && !existsSync(file))
      return `EventStore.URL ${redactUrl(url)}: ${key}=${file}: no such file`;
  }
  return undefined;
}

/**
 * The production store: KurrentDB (EventStoreDB 22.10 and later) over gRPC, chosen with
 * EventStore.URL=kurrentdb://… Opened with `EsdbEventStore.open`, which refuses a server too old for it.
 */
export class EsdbEventStore implements EventStore, CheckpointStore {
  private readonly client: KurrentDBClient;
  /** Bookkeeping streams whose metadata is known to keep only their newest event. */
  private readonly trimmed = new Set<string>();
  /** Last known revision of each checkpoint stream this process writes (-1: none yet). */
  private readonly checkpointRevisions = new Map<string, number>();
  /** The newest position of a user event this process has seen stored. */
  private seenHead = 0;

  private constructor(readonly url: string) {
    const problem = urlProblem(url);
    if (problem !== undefined) throw new StartupError(problem);
    // EventStore.URL may name its servers by IP: the client's gRPC half would send the IP as the TLS server name.
    leaveOutIpServernames();
    try {
      this.client = KurrentDBClient.connectionString(url);
    } catch (e) {
      // Not a server away: the same URL would fail the same way. The native bridge quotes a URL it cannot parse whole.
      const why = redactCredentialsIn((e as Error).message, url);
      throw new StartupError(`invalid EventStore.URL ${redactUrl(url)}: ${why}`);
    }
  }

  /** Connects and checks the server's version: a server this adapter cannot read correctly is refused here. */
  static async open(url: string): Promise<EsdbEventStore> {
    const store = new EsdbEventStore(url);
    try {
      await checkServerVersion(store.client);
    } catch (e) {
      await store.close().catch(() => undefined);
      throw esdbStoreError(e);
    }
    return store;
  }

  /**
   * One call per append, never queued behind another: the client multiplexes every append of
   * the process over one BatchAppend gRPC stream (correlated by id), so appends of many entities
   * made in one tick are on the wire together and the server commits each stream's batch on its
   * own. An actor's appends to its own stream are already one at a time (its mailbox).
   */
  async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    try {
      // The same ids at the same expected revision are an idempotent write for KurrentDB: a
      // retry after a lost acknowledgement (or a refusal during an election) succeeds and stores nothing twice.
      const result = await this.client.appendToStream(
        stream,
        events.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data as never, metadata: e.metadata as never })),
        { streamState: toExpected(expected) },
      );
      const nextExpectedRevision = toNumber(result.nextExpectedRevision);
      const position = result.position
        ? toNumber(result.position.commit)
        : await this.positionOf(stream, nextExpectedRevision);
      return { nextExpectedRevision, position: this.saw(position) };
    } catch (e) {
      if (e instanceof WrongExpectedVersionError) {
        const actual = typeof e.actualState === "bigint" ? toNumber(e.actualState) : -1;
        throw new WrongExpectedRevisionError({ stream, expected, actual });
      }
      throw esdbStoreError(e);
    }
  }

  private saw(position: number): number {
    if (position > this.seenHead) this.seenHead = position;
    return position;
  }

  /** An idempotent write is acknowledged without a position; the stored event has it. */
  private async positionOf(stream: string, revision: number): Promise<number> {
    const [event] = await this.readStream(stream, { fromRevision: revision, maxCount: 1 });
    return event?.position ?? 0;
  }

  /** From the leader, as readStream: the stream's last event, read backwards from its end. */
  async streamRevision(stream: string): Promise<number> {
    try {
      const last = await this.lastEvent(stream);
      return last === undefined ? -1 : toNumber(last.revision);
    } catch (e) {
      throw esdbStoreError(e);
    }
  }

  /** The stream's last event, read from the leader; undefined when there is none. The client's errors as they come. */
  private async lastEvent(stream: string): Promise<NonNullable<ResolvedEvent["event"]> | undefined> {
    try {
      const read = this.client.readStream(stream, {
        direction: BACKWARDS,
        fromRevision: END,
        maxCount: 1,
        requiresLeader: true,
      });
      for await (const resolved of read) if (resolved.event) return resolved.event;
      return undefined;
    } catch (e) {
      if (e instanceof StreamNotFoundError) return undefined;
      throw e;
    }
  }

  /**
   * From the leader: an actor loads its stream here before it appends with the expected
   * revision, and a follower behind the leader would make every such append a conflict.
   */
  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(stream, {
        direction: FORWARDS,
        fromRevision: options.fromRevision === undefined ? START : BigInt(options.fromRevision),
        requiresLeader: true,
        ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
      });
      for await (const resolved of read) {
        const e = toRecorded(resolved);
        if (e) out.push(e);
      }
    } catch (e) {
      if (e instanceof StreamNotFoundError) return [];
      throw esdbStoreError(e);
    }
    return out;
  }

  /** A filtered read of $all, the server counting `maxCount` in matching events only; `from` is inclusive. */
  private readAllFiltered(
    filter: Filter,
    from: typeof START | typeof END | Position,
    maxCount: number,
    backwards = false,
  ): AsyncIterable<ResolvedEvent> {
    return readToTheEnd(
      this.client.readAll({ fromPosition: from, maxCount, filter, direction: backwards ? BACKWARDS : FORWARDS }),
    );
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    const wanted = options.maxCount ?? Number.POSITIVE_INFINITY;
    const after = options.after ?? 0;
    let from: typeof START | Position = fromPosition(after);
    try {
      // Pages of filtered reads. KurrentDB reads $all from a position inclusively, so the event at
      // `after` (and each page's first, the previous page's last) comes back again and is skipped.
      for (;;) {
        // Every event asked for is sent and decoded, read or not (readToTheEnd): ask for no more than are wanted,
        // one more for the repeated event at `from`. A one-event read (the store's health probe) stays one event.
        const count = Math.min(READ_ALL_PAGE, wanted - out.length + (from === START ? 0 : 1));
        let seen = 0;
        let last: Position | undefined;
        for await (const resolved of this.readAllFiltered(SUBSCRIPTION_FILTER, from, count)) {
          seen++;
          last = resolved.event?.position ?? last;
          const e = toRecorded(resolved);
          if (!e || e.position <= after || e.position <= (out.at(-1)?.position ?? 0)) continue;
          out.push(e);
          if (out.length >= wanted) return out;
        }
        if (seen < count || last === undefined) return out;
        from = last;
      }
    } catch (e) {
      throw esdbStoreError(e);
    }
  }

  /**
   * The server filters by stream names or event types (esdb-server-filter.ts); the rest of the
   * filter is checked here, on at most `scanBudget` events a page, so a rare actor in a long log
   * answers in several short pages rather than one long wait.
   */
  async readFiltered(filter: EventFilter, options: ReadFilteredOptions): Promise<FilteredPage> {
    checkFilteredRead(filter, options);
    const after = options.after ?? 0;
    // The log only grows at its end: a `through` at or before a position already seen stored needs no head read.
    const through = options.through;
    const head = through !== undefined && through <= this.seenHead ? through : await this.headPosition();
    const hi = Math.min(through ?? head, head);
    const end: FilteredPage = { events: [], scannedThrough: Math.max(after, hi) };
    if (matchesNothing(filter) || after >= hi) return end;
    const server = serverFilterFor(filter, USER_EVENT_TYPES);
    const budget = Math.max(1, options.scanBudget ?? SCAN_BUDGET);
    const events: RecordedEvent[] = [];
    let scanned = 0;
    let scannedThrough = after;
    let from: typeof START | Position = fromPosition(after);
    // A small page asks the server for little first: each event asked for is sent, read or not. The server filters
    // by type and stream only, so a read that came back short of matches asks for twice as many next time.
    let want = Math.min(READ_ALL_PAGE, options.maxCount + 1);
    try {
      for (;;) {
        // A read from a position repeats the event there (inclusive): one more, so every page moves on.
        const count = Math.min(want, budget - scanned) + (from === START ? 0 : 1);
        want = Math.min(READ_ALL_PAGE, want * 2);
        let seen = 0;
        let last: Position | undefined;
        for await (const resolved of this.readAllFiltered(server, from, count)) {
          seen++;
          last = resolved.event?.position ?? last;
          const at = resolved.event?.position;
          if (at === undefined) continue;
          const position = toNumber(at.commit);
          if (position <= scannedThrough) continue;
          if (position > hi) return { events, scannedThrough: end.scannedThrough };
          scanned++;
          scannedThrough = position;
          const e = toRecorded(resolved);
          if (e !== undefined && matchesFilter(e, filter)) {
            events.push(e);
            if (events.length >= options.maxCount) return { events, scannedThrough };
          }
          if (scanned >= budget) return { events, scannedThrough };
        }
        if (seen < count || last === undefined) return { events, scannedThrough: end.scannedThrough };
        from = last;
      }
    } catch (e) {
      throw esdbStoreError(e);
    }
  }

  /** No time index here: the caller reads on and compares the times itself. */
  async positionAt(time: number): Promise<number | undefined> {
    if (!Number.isFinite(time)) throw new RangeError(`time must be a time in ms, got ${time}`);
    return undefined;
  }

  /** No time index here: the whole log (correct, only slower); readFiltered compares each event's time. */
  async timeBounds(since?: number, until?: number): Promise<PositionBounds> {
    for (const [name, v] of [
      ["since", since],
      ["until", until],
    ] as const)
      if (v !== undefined && !Number.isFinite(v)) throw new RangeError(`${name} must be a time in ms, got ${v}`);
    return { after: 0 };
  }

  /** Page by page on this thread (a long replay from KurrentDB is bound by its reads, not by folding). */
  readAllPages(options: ReadAllPagesOptions): AsyncIterable<readonly RecordedEvent[]> {
    return readAllPagesInline((o) => this.readAll(o), options);
  }

  /** The newest event of $all that readAll would return: one filtered read backwards from the end. */
  async headPosition(): Promise<number> {
    try {
      // The server counts matching events only; the client-side guard may still drop a checkpoint stream's event.
      for await (const resolved of this.readAllFiltered(SUBSCRIPTION_FILTER, END, READ_ALL_PAGE, true)) {
        const e = toRecorded(resolved);
        if (e) return this.saw(e.position);
      }
      return 0;
    } catch (e) {
      throw esdbStoreError(e);
    }
  }

  /**
   * The server may end a subscription cleanly (a node shutting down, a leader change, a
   * subscriber too slow for it): that is not the end the caller asked for, so unless stop() was
   * called first, `done` rejects with StoreUnavailableError and the caller resubscribes.
   */
  subscribeToAll(
    options: { readonly after?: number },
    handler: (event: RecordedEvent) => Promise<void> | void,
  ): StoreSubscription {
    const after = options.after ?? 0;
    const subscription = this.client.subscribeToAll({ fromPosition: fromPosition(after), filter: SUBSCRIPTION_FILTER });
    let stopped = false;
    const done = (async () => {
      try {
        for await (const resolved of subscription) {
          if (stopped) return;
          const e = toRecorded(resolved);
          if (e && e.position > after) await handler(e);
        }
      } catch (e) {
        if (!stopped) throw esdbStoreError(e);
        return;
      }
      if (!stopped) throw new StoreUnavailableError({ reason: "the server ended the subscription" });
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

  /** From the leader: a follower's older checkpoint would send events out again that were already published. */
  async load(name: string): Promise<number | undefined> {
    const stream = CHECKPOINT_PREFIX + name;
    try {
      const last = await this.lastEvent(stream);
      this.checkpointRevisions.set(stream, last === undefined ? -1 : toNumber(last.revision));
      const data = last?.data as { position?: unknown } | undefined;
      return typeof data?.position === "number" ? data.position : undefined;
    } catch (e) {
      throw esdbStoreError(e);
    }
  }

  /**
   * Appended with the expected revision, so two writers of one checkpoint (two orchestrators on
   * one KurrentDB) notice each other: on a conflict the stored checkpoint is re-read, and a
   * position already at or past this one is left alone; a checkpoint never moves backwards.
   */
  async save(name: string, position: number): Promise<void> {
    const stream = CHECKPOINT_PREFIX + name;
    try {
      await this.keepLatestOnly(stream);
      for (let attempt = 0; ; attempt++) {
        if (!this.checkpointRevisions.has(stream)) await this.load(name);
        const revision = this.checkpointRevisions.get(stream) ?? -1;
        try {
          const result = await this.client.appendToStream(
            stream,
            jsonEvent({ id: randomUUID(), type: CHECKPOINT_TYPE, data: { position } }),
            { streamState: revision === -1 ? NO_STREAM : BigInt(revision) },
          );
          this.checkpointRevisions.set(stream, toNumber(result.nextExpectedRevision));
          return;
        } catch (e) {
          if (!(e instanceof WrongExpectedVersionError) || attempt >= 2) throw e;
          this.checkpointRevisions.delete(stream);
          const stored = await this.load(name);
          if (stored !== undefined && stored >= position) return;
        }
      }
    } catch (e) {
      throw esdbStoreError(e);
    }
  }

  /**
   * Only the newest event of a bookkeeping stream matters; the server scavenges the rest once
   * its metadata says so. The metadata is written when it does not say so yet, not on every
   * start, so its own stream ($$…) does not grow with each restart.
   */
  private async keepLatestOnly(stream: string): Promise<void> {
    if (this.trimmed.has(stream)) return;
    const { metadata } = await this.client.getStreamMetadata(stream, { requiresLeader: true });
    if (metadata?.maxCount !== KEEP_LATEST.maxCount) await this.client.setStreamMetadata(stream, KEEP_LATEST);
    this.trimmed.add(stream);
  }

  /**
   * A write no reader sees: one bookkeeping event on a probe stream that keeps only its newest
   * (filtered out like every checkpoint). Fails when the server refuses writes (read-only,
   * disk full, not reachable, no leader).
   */
  async checkWritable(): Promise<void> {
    try {
      await this.keepLatestOnly(PROBE_STREAM);
      await this.client.appendToStream(
        PROBE_STREAM,
        jsonEvent({ id: randomUUID(), type: CHECKPOINT_TYPE, data: { probe: true } }),
      );
    } catch (e) {
      throw esdbStoreError(e);
    }
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

/**
 * What start-up says when KurrentDB at `url` cannot be used: a StartupError naming the fix for a server not trusted,
 * not speaking TLS or refusing the credentials (kurrent-connection-problem.ts), else the failure as it was; never
 * with the URL's credentials.
 */
export async function kurrentStartFailure(e: unknown, url: string): Promise<Error> {
  // Said already, without credentials: a URL refused before the client saw it is not given to the client now.
  if (e instanceof StartupError) return e;
  const problem = await kurrentConnectionProblem(e, url);
  if (problem !== undefined) return new StartupError(problem);
  if (!(e instanceof Error)) return new Error(redactCredentialsIn(String(e), url));
  const message = redactCredentialsIn(e.message, url);
  return message === e.message ? e : new StartupError(message);
}
