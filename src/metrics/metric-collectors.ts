/**
 * What the components that own a figure report when /metrics is scraped. They are asked on
 * each scrape (pull), so the hot paths pay nothing for a gauge; each callback must be cheap
 * (no I/O, no walk over the whole fleet per call if it can be avoided: it runs on the event loop).
 */

/** How many nodes are in one (health, membership) pair. Pairs left out are reported as absent, not 0. */
export interface NodeCount {
  readonly health: string;
  readonly membership: string;
  readonly count: number;
}

/** Where one checkpointed processor (read model, NATS publisher, workflow) is, and how far behind the store's head. */
export interface ProcessorProgress {
  readonly name: string;
  /** The last store position the processor has handled. */
  readonly position: number;
  /** Events (positions) between the store's head and `position`. */
  readonly lag: number;
}

/** One entity kind's actors: `resident` in memory, `passivated` known but unloaded (reloaded on demand). */
export interface ActorCount {
  readonly entity: string;
  readonly resident: number;
  readonly passivated: number;
}

/** The HTTP event stream's clients and what they and the hub hold. */
export interface EventStreamFigures {
  readonly clients: number;
  /** Bytes sent to clients that their connections still hold, all clients together. */
  readonly bufferedBytes: number;
  /** Bytes of the newest events' messages the hub keeps for clients switching to live. */
  readonly ringBytes: number;
  /** Clients reading the store in their catch-up turn now (at most API.EventStream.MaxCatchUps). */
  readonly catchingUp: number;
  /** Clients waiting in line for a catch-up turn. */
  readonly waitingForTurn: number;
}

/** The events' wire forms encoded once and shared by the NATS publisher and the event stream (counts since start). */
export interface EncodedEventsFigures {
  /** Asks answered with a message already encoded. */
  readonly hits: number;
  /** Asks that encoded the event (not held, or no longer). */
  readonly misses: number;
  readonly heldBytes: number;
}

/** This orchestrator's part in a cluster of several (Orchestrator.Cluster.Enabled). */
export interface ClusterFigures {
  /** Partitions it may act for now. */
  readonly partitionsHeld: number;
  /** Orchestrators it hears from, itself included. */
  readonly members: number;
  /** Each duty, and whether it runs here now. */
  readonly duties: readonly { readonly name: string; readonly held: boolean }[];
}

/** How many jobs of one type are in one state. */
export interface JobCount {
  readonly type: string;
  readonly state: string;
  readonly count: number;
}

/** How many executions are in one state (Bacalhau's ComputeState). */
export interface ExecutionCount {
  readonly state: string;
  readonly count: number;
}

/** Nodes an operator took out of placement: cordoned, and drains by status (until an undrain). */
export interface NodeRestrictions {
  readonly cordoned: number;
  readonly drains: readonly { readonly status: string; readonly count: number }[];
}

/** The collector kinds and what each returns; register several of a kind and their answers are combined. */
export interface MetricCollectors {
  readonly nodes: () => readonly NodeCount[];
  readonly processors: () => readonly ProcessorProgress[];
  readonly actors: () => readonly ActorCount[];
  /** Deadlines held by a scheduler's heap; several schedulers add up. */
  readonly deadlines: () => number;
  readonly eventStream: () => EventStreamFigures;
  readonly encodedEvents: () => EncodedEventsFigures;
  readonly cluster: () => ClusterFigures;
  readonly jobs: () => readonly JobCount[];
  readonly executions: () => readonly ExecutionCount[];
  readonly nodeRestrictions: () => NodeRestrictions;
}

export type CollectorKind = keyof MetricCollectors;
