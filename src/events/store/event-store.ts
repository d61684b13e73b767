/**
 * The EventStore port. Revisions are 0-based per stream, as in EventStoreDB; positions are the
 * store's global order (strictly increasing, not necessarily contiguous). `after` is exclusive.
 */
export type ExpectedRevision = "no_stream" | "any" | "stream_exists" | number;

export interface NewEvent {
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export interface RecordedEvent {
  readonly id: string;
  readonly type: string;
  readonly stream: string;
  readonly revision: number;
  readonly position: number;
  /** metadata.time when the writer supplied one, else the time the store recorded it. */
  readonly time: string;
  /** May be a getter that parses on first use (SQLite's): copy it by name, not by spreading the event. */
  readonly data: unknown;
  /** May be a getter that parses on first use (SQLite's): copy it by name, not by spreading the event. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /**
   * metadata.schemaVersion, when the store keeps it beside the metadata (SQLite, for events it
   * appended): read without parsing the metadata. Undefined: read it from the metadata.
   */
  readonly schemaVersion?: number | undefined;
}

export interface AppendResult {
  /** Revision of the last event appended: the expected revision for the next append. */
  readonly nextExpectedRevision: number;
  /** Global position of the last event appended. */
  readonly position: number;
}

export interface ReadStreamOptions {
  readonly fromRevision?: number;
  readonly maxCount?: number;
}

export interface ReadAllOptions {
  readonly after?: number;
  readonly maxCount?: number;
}

export interface ReadAllPagesOptions {
  readonly after?: number;
  /** Events per page, at most. */
  readonly pageSize: number;
}

/** Events whose metadata names this actor: `{type: "operator", id: "alice"}`; no id: every actor of the type. */
export interface ActorFilter {
  readonly type: string;
  readonly id?: string;
}

/**
 * Which events a filtered read returns. Each list is a choice of one of its values (an empty list
 * matches nothing); the parts given must all hold. Categories and entities are the caller's to
 * expand into types and streams.
 */
export interface EventFilter {
  readonly types?: readonly string[];
  readonly streams?: readonly string[];
  readonly actors?: readonly ActorFilter[];
  /** Epoch ms, inclusive: events whose time is at or after it. An event whose time does not parse is in no window. */
  readonly since?: number;
  /** Epoch ms, inclusive: events whose time is at or before it. */
  readonly until?: number;
}

export interface ReadFilteredOptions {
  /** Exclusive. */
  readonly after?: number;
  /** Inclusive; the store's head when absent. */
  readonly through?: number;
  /** Events per page, at most (at least 1). */
  readonly maxCount: number;
  /**
   * How many events an adapter that filters by scanning (EventStoreDB: actor and time) may look
   * at for this page before it ends it early. SQLite reads what it returns from its indexes, and
   * scans only an actor's own stream (a node's `node-<id>`) for that actor's rows: at most this
   * many of them a page (default 1,000).
   */
  readonly scanBudget?: number;
}

export interface FilteredPage {
  /** In store order. */
  readonly events: RecordedEvent[];
  /**
   * Every matching event after `after` up to here is in `events`: the next page reads after it.
   * A page with fewer than maxCount events whose scannedThrough is short of the bound asked for
   * (through, or the head) was ended by the scan budget, not by the end of the selection.
   */
  readonly scannedThrough: number;
}

/** Positions that hold every event of a time window: `after` exclusive, `through` inclusive (absent: to the head). */
export interface PositionBounds {
  readonly after: number;
  readonly through?: number;
}

export interface StoreSubscription {
  /** Stops delivery; resolves once no handler call is running. */
  stop(): Promise<void>;
  /** Settles when the subscription ends: resolves after stop(), rejects on a store or handler error. */
  readonly done: Promise<void>;
}

export interface EventStore {
  /**
   * Appends atomically with the expected revision. Idempotent by event id: appending events whose
   * ids are already stored, in that order, where this append would have put them, succeeds again
   * with the original result and stores nothing, so a retry after a lost acknowledgement never
   * duplicates a write nor reports a committed one as failed.
   */
  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /**
   * The revision of the stream's last event, -1 when the stream does not exist: the expected revision of the next
   * append to it, read without reading the stream.
   */
  streamRevision(stream: string): Promise<number>;
  /** Events of one stream in revision order; empty when the stream does not exist. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Events of every stream in global order (system events and checkpoints excluded). */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * A replay: every event after `after` in global order, as readAll returns them, page after
   * page until a read finds fewer than `pageSize` (the end of the store as that read saw it).
   * The adapter may read ahead of its consumer (SQLite does, on a thread of its own, for long
   * replays); pages still come in order, each position exactly once, and a failed read rejects
   * the iteration where it failed (no page is skipped, none follows). Leaving the loop early
   * ends the read. Empty pages are not yielded.
   */
  readAllPages(options: ReadAllPagesOptions): AsyncIterable<readonly RecordedEvent[]>;
  /**
   * Catch-up subscription: every event after `after` in global order, then live ones as they are
   * appended (never checkpoints). The handler is awaited; the next event is not delivered before it settles.
   */
  subscribeToAll(
    options: { readonly after?: number },
    handler: (event: RecordedEvent) => Promise<void> | void,
  ): StoreSubscription;
  /**
   * The position of the newest event stored now (system events and checkpoints excluded), 0 when
   * there is none: where a catch-up at start-up has read everything stored before it.
   */
  headPosition(): Promise<number>;
  /** Events matching the filter, in store order, a page at a time. */
  readFiltered(filter: EventFilter, options: ReadFilteredOptions): Promise<FilteredPage>;
  /**
   * The end of the log as of a moment: the largest position such that no event up to it has a
   * time later than `time` (epoch ms), 0 when the first event already has; a prefix of the log,
   * so a fold over it is a state the cluster was in. Undefined when the adapter keeps no time
   * index (the caller reads on and compares the times itself).
   */
  positionAt(time: number): Promise<number | undefined>;
  /**
   * Positions holding every event whose time is in [since, until] (epoch ms, inclusive; either may
   * be absent). Events inside the bounds may still lie outside the window: compare their times.
   * An adapter that keeps no time index answers the whole log.
   */
  timeBounds(since?: number, until?: number): Promise<PositionBounds>;
  /** Start-up check: fails with StoreUnavailableError unless the store can take a write now. */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}

/** Where a named reader (the NATS publisher) got to, kept next to the events. */
export interface CheckpointStore {
  load(name: string): Promise<number | undefined>;
  save(name: string, position: number): Promise<void>;
}
