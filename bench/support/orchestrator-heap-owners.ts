import { roots, type HeapGraph, type OwnerSpec } from "./heap-owners.ts";

/** The values (objects) of a JS Map held in `field` of every instance of `className`. */
function mapValues(g: HeapGraph, className: string, field: string): number[] {
  return g.instances(className).flatMap((i) => {
    const map = g.prop(i, field);
    const table = map === undefined ? undefined : g.prop(map, "table");
    return table === undefined ? [] : g.children(table).filter((v) => g.typeOf(v) === "object");
  });
}

/** A field of each of `objects`. */
function fieldOf(g: HeapGraph, objects: readonly number[], field: string): number[] {
  return objects.flatMap((o) => {
    const t = g.prop(o, field);
    return t === undefined ? [] : [t];
  });
}

/**
 * The orchestrator's per-node structures, in attribution order (bench/support/heap-owners.ts:
 * an object reachable from several counts for the first). Class and field names are those of
 * src/ (tsc keeps them in dist/); an owner whose class is gone simply reports nothing.
 */
export const ORCHESTRATOR_HEAP_OWNERS: readonly OwnerSpec[] = [
  // The read model: each view's NodeInfo first (the bulk of a view), then the views themselves.
  { name: "node views: NodeInfo objects (view.info)", roots: roots.fieldOfMapValues("NodeViews", "views", "info") },
  {
    name: "node views: NodeView objects and their map (ids, times, credential)",
    roots: roots.field("NodeViews", "views"),
  },
  // Resident actors: each state's NodeInfo (a second copy, decoded from the actor's own stream read), then the rest.
  {
    name: "actor registry: resident actors' NodeInfo (state.info)",
    roots: (g) => fieldOf(g, fieldOf(g, mapValues(g, "EntityRegistry", "resident"), "current"), "info"),
  },
  { name: "actor registry: resident actors and their states", roots: roots.field("EntityRegistry", "resident") },
  { name: "actor registry: the rest (armed deadlines, loading)", roots: roots.instances("EntityRegistry") },
  { name: "node index: label index", roots: roots.field("NodeIndex", "labels") },
  { name: "node index: orders (8 orders × 9 partitions)", roots: roots.field("NodeIndex", "orders") },
  { name: "node index: everSeen (ids ever seen)", roots: roots.field("NodeIndex", "everSeen") },
  // The tracker's reports before the index's entries: an entry points at its node's report's
  // AvailableCapacity (one object for both), counted where it is received.
  { name: "liveness tracker: resource reports", roots: roots.field("LivenessTracker", "reports") },
  { name: "node index: entries (Entry objects)", roots: roots.field("NodeIndex", "entries") },
  { name: "node index: capacity of nodes without an entry", roots: roots.field("NodeIndex", "pendingCapacity") },
  { name: "node index: the rest", roots: roots.instances("NodeIndex") },
  { name: "liveness tracker: slots map, ids, typed arrays", roots: roots.instances("LivenessTracker") },
  { name: "node directory", roots: roots.instances("NodeDirectory") },
  { name: "deadline scheduler (heap arrays, index, handlers)", roots: roots.instances("DeadlineScheduler") },
  { name: "node manager: the rest (recovered credentials, revoked keys)", roots: roots.instances("NodeManager") },
  { name: "heartbeat refusal limiter", roots: roots.instances("RefusalLimiter") },
  { name: "processor host (event buffer)", roots: roots.instances("ProcessorHost") },
  { name: "NATS event publisher", roots: roots.instances("NatsEventPublisher") },
  { name: "node-state snapshotter", roots: roots.instances("NodeStateSnapshotter") },
  { name: "node views: the rest", roots: roots.instances("NodeViews") },
  { name: "SQLite event store", roots: roots.instances("SqliteEventStore") },
  {
    name: "metrics (Shoal's and prom-client's registries)",
    roots: (g) => [...g.instances("ShoalMetrics"), ...g.instances("Registry")],
  },
  {
    name: "nats.js connection",
    roots: (g) => [...g.instances("NatsConnectionImpl"), ...g.instances("ProtocolHandler")],
  },
];
