import { randomUUID } from "node:crypto";
import type {
  EventFilter,
  EventStore,
  FilteredPage,
  NewEvent,
  ReadFilteredOptions,
  RecordedEvent,
} from "../../src/events/store/event-store.ts";
import { seededRandom } from "./seeded-random.ts";

/**
 * A generated history for filtered-read tests: node, job and execution streams, operators who act
 * rarely, nodes, system and workflow actors, events with no actor, and times that are not in store
 * order (most a second apart, some minutes early, a few an hour early, a few that are not times).
 */
export const LOG_TYPES = {
  node: ["NodeRegistered", "NodeApproved", "NodeCordoned", "NodeBecameHealthy", "NodeBecameUnhealthy"],
  job: ["JobSubmitted", "JobQueued", "JobCompleted"],
  execution: ["ExecutionCreated", "ExecutionStarted", "ExecutionCompleted"],
} as const;
export const LOG_START_MS = Date.UTC(2026, 2, 1);

export interface LogEvent {
  readonly stream: string;
  readonly event: NewEvent;
}

export function skewedLog(prefix: string, count: number, seed = 20): LogEvent[] {
  const random = seededRandom(seed);
  const streams = {
    node: Array.from({ length: 30 }, (_, i) => `node-${prefix}n${i}`),
    job: Array.from({ length: 15 }, (_, i) => `job-${prefix}j${i}`),
    execution: Array.from({ length: 25 }, (_, i) => `execution-${prefix}x${i}`),
  };
  const out: LogEvent[] = [];
  for (let i = 0; i < count; i++) {
    const category = random.pick(["node", "node", "job", "execution"] as const);
    const stream = random.pick(streams[category]);
    const r = random.next();
    const actor =
      r < 0.01
        ? { type: "operator", id: random.pick(["alice", "bob", "carol"]) }
        : r < 0.5
          ? { type: "node", id: `${prefix}n${random.int(30)}` }
          : r < 0.7
            ? { type: "system", id: random.pick(["health", "job-limits"]) }
            : r < 0.95
              ? { type: "workflow", id: random.pick(["jobs", "node-reactions", "node-drain"]) }
              : r < 0.97
                ? { type: "operator" }
                : undefined;
    const s = random.next();
    const skew = s < 0.1 ? random.int(120_000) : s < 0.11 ? 3_600_000 : 0;
    const time = s > 0.995 ? "not a time" : new Date(LOG_START_MS + i * 1000 - skew).toISOString();
    out.push({
      stream,
      event: {
        id: randomUUID(),
        type: random.pick(LOG_TYPES[category]),
        data: { i },
        metadata: { time, ...(actor === undefined ? {} : { actor }), reason: `r${i}` },
      },
    });
  }
  return out;
}

/** Appends the log in groups of appends made in one tick (shared commits, streams interleaved). */
export async function appendLog(store: EventStore, log: readonly LogEvent[], group = 50): Promise<void> {
  for (let i = 0; i < log.length; i += group) {
    const slice = log.slice(i, i + group);
    // One append per stream per tick keeps each stream's order the log's order.
    const byStream = new Map<string, NewEvent[]>();
    for (const { stream, event } of slice) byStream.set(stream, [...(byStream.get(stream) ?? []), event]);
    await Promise.all([...byStream].map(([stream, events]) => store.append(stream, events, "any")));
  }
}

/** The filter decided the obvious way, one event at a time: what every filtered read must equal. */
export function naiveMatch(e: RecordedEvent, f: EventFilter): boolean {
  if (f.types && !f.types.includes(e.type)) return false;
  if (f.streams && !f.streams.includes(e.stream)) return false;
  if (f.actors) {
    let actor: { type?: unknown; id?: unknown } | undefined;
    try {
      actor = e.metadata.actor as typeof actor;
    } catch {
      actor = undefined; // metadata that is not JSON names no actor
    }
    if (!f.actors.some((a) => actor?.type === a.type && (a.id === undefined || actor?.id === a.id))) return false;
  }
  const t = new Date(e.time).getTime();
  if (f.since !== undefined && !(t >= f.since)) return false;
  if (f.until !== undefined && !(t <= f.until)) return false;
  return true;
}

/** Every page of a filtered read, at `limit`, from `after` through `through`. */
export async function readAllFilteredPages(
  store: EventStore,
  filter: EventFilter,
  options: Omit<ReadFilteredOptions, "maxCount"> & { readonly through: number; readonly limit: number },
): Promise<{ events: RecordedEvent[]; pages: FilteredPage[] }> {
  const events: RecordedEvent[] = [];
  const pages: FilteredPage[] = [];
  let after = options.after ?? 0;
  for (;;) {
    const page = await store.readFiltered(filter, {
      after,
      through: options.through,
      maxCount: options.limit,
      ...(options.scanBudget === undefined ? {} : { scanBudget: options.scanBudget }),
    });
    pages.push(page);
    events.push(...page.events);
    if (page.scannedThrough >= options.through) return { events, pages };
    if (page.scannedThrough <= after)
      throw new Error(`a page after ${after} did not move on: ${JSON.stringify(filter)}`);
    after = page.scannedThrough;
  }
}

/** Filters over a skewed log: each part alone, the parts together, and random combinations. */
export function filtersFor(prefix: string, log: readonly LogEvent[], seed = 7): EventFilter[] {
  const random = seededRandom(seed);
  const streams = [...new Set(log.map((l) => l.stream))];
  const at = (i: number) => LOG_START_MS + i * 1000;
  const n = log.length;
  const fixed: EventFilter[] = [
    {},
    { types: ["NodeApproved"] },
    { types: ["NodeApproved", "JobQueued", "ExecutionStarted"] },
    { types: ["NoSuchType"] },
    { types: [] },
    { streams: [streams[0] as string] },
    { streams: [streams[1] as string, streams[2] as string, `node-${prefix}missing`] },
    { actors: [{ type: "operator" }] },
    { actors: [{ type: "operator", id: "alice" }] },
    { actors: [{ type: "operator", id: "alice" }, { type: "operator" }] },
    { actors: [{ type: "node", id: `${prefix}n3` }] },
    { actors: [{ type: "workflow" }, { type: "system", id: "health" }] },
    { since: at(Math.floor(n / 2)) },
    { until: at(Math.floor(n / 3)) },
    { since: at(Math.floor(n / 3)), until: at(Math.floor(n / 3) + 40) },
    { since: at(n + 10_000) },
    { until: at(-10_000) },
    { since: at(200), until: at(100) },
    { actors: [{ type: "operator", id: "alice" }], types: ["NodeBecameHealthy"] },
    { actors: [{ type: "node" }], types: ["NodeCordoned"] },
    { types: ["ExecutionCompleted"], since: at(n - 300) },
    { streams: [streams[0] as string, streams[5] as string], types: ["NodeApproved", "JobQueued"] },
    { streams: [streams[3] as string], actors: [{ type: "workflow" }] },
    {
      streams: streams.slice(0, 8),
      types: ["NodeApproved", "NodeCordoned", "JobCompleted", "ExecutionCreated"],
      actors: [{ type: "node" }, { type: "workflow", id: "jobs" }],
      since: at(Math.floor(n / 4)),
      until: at(Math.floor((3 * n) / 4)),
    },
  ];
  const types = Object.values(LOG_TYPES).flat();
  const actors = [
    { type: "operator" },
    { type: "operator", id: random.pick(["alice", "bob", "carol"]) },
    { type: "node", id: `${prefix}n${random.int(30)}` },
    { type: "system" },
    { type: "workflow", id: "node-drain" },
  ];
  const randomFilters = Array.from({ length: 16 }, (): EventFilter => {
    const f: { -readonly [K in keyof EventFilter]: EventFilter[K] } = {};
    if (random.next() < 0.5) f.types = Array.from({ length: 1 + random.int(3) }, () => random.pick(types));
    if (random.next() < 0.3) f.streams = Array.from({ length: 1 + random.int(4) }, () => random.pick(streams));
    if (random.next() < 0.5) f.actors = Array.from({ length: 1 + random.int(2) }, () => random.pick(actors));
    if (random.next() < 0.5) {
      const a = random.int(n);
      f.since = at(a);
      if (random.next() < 0.7) f.until = at(a + random.int(n / 2));
    } else if (random.next() < 0.3) f.until = at(random.int(n));
    return f;
  });
  return [...fixed, ...randomFilters];
}
