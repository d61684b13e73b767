import type { KV } from "nats";
import { JS_CODES, jsErrorCode } from "../transport/jetstream-api-error.ts";

/** One lease this orchestrator holds in the key-value bucket. */
export interface HeldLease {
  readonly key: string;
  /**
   * The bucket revision that created the lease. Revisions only grow, so two owners of one key
   * never share an epoch and a later owner's is always higher; events written under the lease
   * carry it.
   */
  readonly epoch: number;
  /** The revision the next renewal must update (compare-and-set). */
  revision: number;
  /**
   * On the elapsed (monotonic) clock: the moment the owner must have stopped acting unless a
   * renewal landed. Counted from when the request that set the bucket's expiry was *sent*, so
   * the server's own expiry is never earlier.
   */
  validUntil: number;
}

export type Renewal = "renewed" | "lost" | "unreachable";

export interface LeaseTableOptions {
  readonly kv: KV;
  /** Unique per process start, so a restarted orchestrator never mistakes its old lease for its own. */
  readonly owner: string;
  /** The bucket's TTL: a lease not renewed for this long disappears and another may take it. */
  readonly ttlMs: number;
  /** Stop acting this much before the TTL runs out (clock rates differ; a paused process resumes late). */
  readonly safetyMs: number;
  /** A monotonic clock in milliseconds: wall-clock jumps must not stretch a lease. */
  readonly elapsed: () => number;
}

/** Keys read at once when looking for another holder: a cluster's usual partition count in one round trip. */
const HOLDER_BATCH = 64;

const isWrongLastSequence = (e: unknown): boolean => jsErrorCode(e) === JS_CODES.WRONG_LAST_SEQUENCE;

/**
 * Leases as keys of a JetStream key-value bucket: taken with create, kept with update at the
 * revision last seen, given back with a delete at that revision, lost when the bucket's TTL
 * expires them. Ownership is advisory and for efficiency: the expected revision of every append
 * to the event store stays the guard against two writers.
 */
export class LeaseTable {
  private readonly value: Uint8Array;
  /** Keys whose create went unanswered: it may have landed, leaving a lease of ours nobody renews. */
  private readonly unanswered = new Set<string>();

  constructor(private readonly options: LeaseTableOptions) {
    if (options.safetyMs >= options.ttlMs) throw new RangeError("the lease safety margin must be shorter than its TTL");
    this.value = new TextEncoder().encode(options.owner);
  }

  get owner(): string {
    return this.options.owner;
  }

  /** The lease, or undefined when someone holds it. Network failures throw. */
  async acquire(key: string): Promise<HeldLease | undefined> {
    const sentAt = this.options.elapsed();
    try {
      const revision = await this.options.kv.create(key, this.value);
      this.unanswered.delete(key);
      return { key, epoch: revision, revision, validUntil: this.validFrom(sentAt) };
    } catch (e) {
      if (!isWrongLastSequence(e)) {
        this.unanswered.add(key);
        throw e;
      }
      if (this.unanswered.delete(key)) await this.clearLanded(key);
      return undefined;
    }
  }

  /**
   * Extends the lease. "lost" when another owner may act on it now: it expired on this clock
   * before the renewal, or the bucket refused the revision. "unreachable" when the bucket did
   * not answer: the lease stays held until `validUntil`, and the next renewal tries again.
   */
  async renew(lease: HeldLease): Promise<Renewal> {
    const sentAt = this.options.elapsed();
    if (sentAt >= lease.validUntil) return "lost";
    try {
      lease.revision = await this.options.kv.update(lease.key, this.value, lease.revision);
      lease.validUntil = this.validFrom(sentAt);
      return "renewed";
    } catch (e) {
      if (!isWrongLastSequence(e)) return "unreachable";
      // A renewal that timed out may have landed: then the key is ours at a newer revision.
      return (await this.adoptLanded(lease)) ? "renewed" : "lost";
    }
  }

  /**
   * Another owner holding one of these keys now, or undefined when none does. Read key by key, a batch at a time
   * (listing keys needs a consumer, which stalls while the bucket's stream elects a leader), until one is found.
   * Network failures throw.
   */
  async anotherHolder(keys: readonly string[]): Promise<string | undefined> {
    const decoder = new TextDecoder();
    for (let i = 0; i < keys.length; i += HOLDER_BATCH) {
      const entries = await Promise.all(keys.slice(i, i + HOLDER_BATCH).map((key) => this.options.kv.get(key)));
      const holder = entries
        .flatMap((e) => (e?.operation === "PUT" ? [decoder.decode(e.value)] : []))
        .find((owner) => owner !== this.options.owner);
      if (holder !== undefined) return holder;
    }
    return undefined;
  }

  /** Gives the lease back so another owner need not wait out the TTL. Best effort: expiry frees it anyway. */
  async release(lease: HeldLease): Promise<void> {
    lease.validUntil = Number.NEGATIVE_INFINITY;
    try {
      await this.options.kv.delete(lease.key, { previousSeq: lease.revision });
    } catch (e) {
      // A renewal that timed out may have landed: the key is then still ours, at a newer revision.
      if (isWrongLastSequence(e) && (await this.adoptLanded(lease))) {
        await this.options.kv.delete(lease.key, { previousSeq: lease.revision }).catch(() => undefined);
      }
      // Otherwise another owner already holds it, or the bucket is unreachable and the TTL will do.
    }
  }

  /** Whether the owner may still act under this lease, by its own clock and nothing else. */
  holds(lease: HeldLease): boolean {
    return this.options.elapsed() < lease.validUntil;
  }

  /** Milliseconds left on this clock before the owner must stop acting under the lease. */
  remaining(lease: HeldLease): number {
    return lease.validUntil - this.options.elapsed();
  }

  /** Frees a lease whose create landed unanswered, so it need not wait out the TTL; the next try takes it. */
  private async clearLanded(key: string): Promise<void> {
    try {
      const entry = await this.options.kv.get(key);
      if (entry?.operation === "PUT" && new TextDecoder().decode(entry.value) === this.options.owner) {
        await this.options.kv.delete(key, { previousSeq: entry.revision });
      }
    } catch {
      this.unanswered.add(key);
    }
  }

  private async adoptLanded(lease: HeldLease): Promise<boolean> {
    try {
      const entry = await this.options.kv.get(lease.key);
      if (!entry || entry.operation !== "PUT" || new TextDecoder().decode(entry.value) !== this.options.owner) {
        return false;
      }
      // validUntil stays as it was: when the landed renewal was sent is not known here.
      lease.revision = entry.revision;
      return true;
    } catch {
      return false;
    }
  }

  private validFrom(sentAt: number): number {
    return sentAt + this.options.ttlMs - this.options.safetyMs;
  }
}
