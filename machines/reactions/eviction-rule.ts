/**
 * How fast the work of nodes that went silent is moved, as Kubernetes' node lifecycle controller
 * rate-limits its evictions (--node-eviction-rate, --secondary-node-eviction-rate,
 * --unhealthy-zone-threshold, --large-cluster-size-threshold; anchors.md B.1). Shoal has no zones:
 * the fleet is one.
 */
export interface EvictionPolicy {
  /** Nodes per second whose work is moved while the fleet is mostly healthy. */
  readonly rate: number;
  /** Nodes per second once the unhealthy share reaches the threshold, in a fleet larger than largeClusterSize. */
  readonly secondaryRate: number;
  /** The share (0..1] of unhealthy nodes at or above which the fleet counts as partly disrupted. */
  readonly unhealthyThreshold: number;
  /** A fleet of at most this many nodes moves no work at all while partly disrupted. */
  readonly largeClusterSize: number;
}

/** The approved compute nodes, and how many of them are UNHEALTHY or UNKNOWN now. */
export interface FleetHealth {
  readonly nodes: number;
  readonly unhealthy: number;
}

/**
 * - normal: primary rate.
 * - partial: more than 2 nodes and at least the threshold share unhealthy: secondary rate (0 in a small fleet).
 * - full: no node is healthy. Kubernetes stops evicting when every zone is down, taking it for a
 *   fault of the control plane's own connectivity rather than of every node at once; so does Shoal.
 * - own-transport: the orchestrator's own NATS is down: nobody can be reached, nothing moves.
 * - grace: the orchestrator has just started, or its transport just came back: every node has a
 *   full DisconnectTimeout to heartbeat (as the node manager gives it) before its work moves.
 */
export type Disruption = "normal" | "partial" | "full" | "own-transport" | "grace";

/** What the orchestrator knows of its own state. */
export interface OwnState {
  readonly now: number;
  readonly transportDown?: boolean;
  /** Until this instant (ms) nothing moves: the grace after a start or the transport's return. */
  readonly graceUntil?: number;
}

/** Kubernetes' evictionLimiterBurst: one node at once after a quiet spell, then the rate. */
export const EVICTION_BURST = 1;

/** A token bucket: `tokens` at `at` (ms). */
export interface EvictionBucket {
  readonly tokens: number;
  readonly at: number;
}

export const FULL_BUCKET = (at: number): EvictionBucket => ({ tokens: EVICTION_BURST, at });

export function disruptionOf(fleet: FleetHealth, policy: EvictionPolicy, own: OwnState = { now: 0 }): Disruption {
  if (own.transportDown === true) return "own-transport";
  if (own.graceUntil !== undefined && own.now < own.graceUntil) return "grace";
  const healthy = fleet.nodes - fleet.unhealthy;
  if (fleet.unhealthy > 0 && healthy <= 0) return "full";
  // Kubernetes' ComputeZoneState: more than two not ready and at least the threshold share.
  if (fleet.unhealthy > 2 && fleet.unhealthy / fleet.nodes >= policy.unhealthyThreshold) return "partial";
  return "normal";
}

/** Nodes per second whose work may be moved now; 0: paused. */
export function evictionRateOf(disruption: Disruption, fleet: FleetHealth, policy: EvictionPolicy): number {
  switch (disruption) {
    case "normal":
      return policy.rate;
    case "partial":
      return fleet.nodes > policy.largeClusterSize ? policy.secondaryRate : 0;
    default:
      return 0;
  }
}

export interface EvictionStep {
  /** The nodes whose work moves now, first come first. */
  readonly release: readonly string[];
  /** The nodes that wait, in their order. */
  readonly waiting: readonly string[];
  readonly bucket: EvictionBucket;
  readonly disruption: Disruption;
  readonly rate: number;
  /**
   * When the next one may go, from now (ms); undefined while nothing waits or the rate is 0 (paused; the end of a grace
   * is known).
   */
  readonly nextInMs: number | undefined;
}

/**
 * Which of the waiting nodes (in the order they started waiting) have their work moved now, and
 * which wait: a token bucket at the rate the fleet's state allows, holding at most one token.
 * Pure: the caller keeps the bucket and calls again at `nextInMs`, or when the fleet changes.
 */
export function evictionStep(
  waiting: readonly string[],
  fleet: FleetHealth,
  policy: EvictionPolicy,
  bucket: EvictionBucket,
  own: OwnState,
): EvictionStep {
  const { now } = own;
  const disruption = disruptionOf(fleet, policy, own);
  const rate = evictionRateOf(disruption, fleet, policy);
  if (rate <= 0) {
    const nextInMs = disruption === "grace" && waiting.length > 0 ? (own.graceUntil as number) - now : undefined;
    return { release: [], waiting, bucket: { tokens: bucket.tokens, at: now }, disruption, rate, nextInMs };
  }
  let tokens = Math.min(EVICTION_BURST, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * rate);
  let taken = 0;
  // A timer set for `nextInMs` must find its token: rounding must not leave it a hair short.
  while (taken < waiting.length && tokens >= 1 - 1e-9) {
    tokens -= 1;
    taken++;
  }
  const left = waiting.slice(taken);
  const nextInMs = left.length === 0 ? undefined : Math.max(1, Math.ceil(((1 - tokens) / rate) * 1000));
  return { release: waiting.slice(0, taken), waiting: left, bucket: { tokens, at: now }, disruption, rate, nextInMs };
}
