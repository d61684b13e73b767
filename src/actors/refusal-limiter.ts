/**
 * At most one refusal per node per interval, remembering at most `maxNodes` nodes: a flood of
 * heartbeats (one node's, or many made-up ids' on a NATS without per-node keys) cannot make the
 * orchestrator flood back, nor grow its memory.
 */
export class RefusalLimiter {
  private readonly lastAt = new Map<string, number>();
  private lastPruneAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly intervalMs: number,
    private readonly maxNodes = 10_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Nodes remembered now (at most maxNodes). */
  get size(): number {
    return this.lastAt.size;
  }

  /** Whether a refusal may be sent to this node now; if so, it counts as sent. */
  allow(nodeId: string): boolean {
    const now = this.now();
    const last = this.lastAt.get(nodeId);
    if (last !== undefined && now - last < this.intervalMs) return false;
    if (last === undefined && this.lastAt.size >= this.maxNodes && !this.prune(now)) return false;
    this.lastAt.set(nodeId, now);
    return true;
  }

  /** Forgets nodes whose interval is over; at most once per interval, so a flood of new ids costs O(1) each. */
  private prune(now: number): boolean {
    if (now - this.lastPruneAt < this.intervalMs) return false;
    this.lastPruneAt = now;
    for (const [nodeId, at] of this.lastAt) if (now - at >= this.intervalMs) this.lastAt.delete(nodeId);
    return this.lastAt.size < this.maxNodes;
  }
}
