import type { Logger } from "pino";
import type { Clock } from "../actors/clock.ts";
import type { DeadlineScheduler } from "../actors/deadline-scheduler.ts";
import type { HeldLease, LeaseTable } from "./lease-table.ts";
import type { Presence } from "./presence.ts";
import { partitionOf } from "./partition-of.ts";

/** What an orchestrator owns: a partition of the entities, or a duty the cluster runs once. */
export type Owned = { readonly partition: number } | { readonly duty: string };

export interface OwnershipListener {
  /** Start acting for it (arm its deadlines, take its requests), stamping `epoch` on what it writes. */
  gained(owned: Owned, epoch: number): void;
  /** Stop acting for it now: the lease was lost, handed off, or is about to run out on this clock. */
  lost(owned: Owned, why: "expired" | "taken" | "handed-off" | "stopped"): void;
}

export interface OwnershipOptions {
  readonly table: LeaseTable;
  readonly presence: Presence;
  readonly partitions: number;
  readonly duties: readonly string[];
  /** How often leases are renewed and free ones looked for; well under the TTL minus its safety margin. */
  readonly tickMs: number;
  readonly clock: Clock;
  readonly deadlines: DeadlineScheduler;
  readonly listener: OwnershipListener;
  readonly log: Logger;
}

const TICK = "cluster:ownership-tick";
const EXPIRY = "cluster:lease-expiry";
const partitionKey = (p: number) => `partitions.${p}`;
const dutyKey = (d: string) => `duties.${d}`;

/**
 * Keeps this orchestrator's fair share of the partitions (the partition count over the live
 * members, rounded up) and any free duty, under leases that it renews every tick. Free leases
 * are found by polling: an expired key raises no watch event on nats-server 2.9. A lease about to
 * run out on this process's own clock is dropped before the bucket could give it to another
 * owner, so a process paused past its lease finds it lost the moment it runs again.
 *
 * A member that has just started has heard from nobody yet, so its first tick would count one
 * member and take every free partition, more than its share beside members already holding theirs,
 * and hand the surplus back a tick later (moving those partitions twice). It takes no partition on
 * that tick unless the bucket shows no other holder (the whole cluster starting, which must not
 * wait); by its second tick every member has answered its presence question.
 */
export class Ownership {
  private readonly held = new Map<string, { owned: Owned; lease: HeldLease }>();
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Until its first tick is over: the presence view may still miss members. */
  private joining = true;
  /** Stopping: it has said it leaves, keeps what it holds until stop() and takes nothing more. */
  private leaving = false;

  constructor(private readonly options: OwnershipOptions) {}

  start(): void {
    this.options.presence.start();
    this.schedule(0);
  }

  /** Whether this orchestrator may act for the partition right now (its lease still runs on this clock). */
  ownsPartition(partition: number): boolean {
    return this.holds(partitionKey(partition));
  }

  ownsDuty(duty: string): boolean {
    return this.holds(dutyKey(duty));
  }

  /** The epoch to stamp on a write for this partition, or undefined when it is not ours. */
  epochOf(partition: number): number | undefined {
    return this.valid(partitionKey(partition))?.epoch;
  }

  /** Orchestrators heard from recently, this one included. */
  get members(): number {
    return this.options.presence.count();
  }

  /** How many partitions this orchestrator may act for right now. */
  get partitionsHeld(): number {
    let held = 0;
    for (const [key, entry] of this.held) if ("partition" in entry.owned && this.holds(key)) held++;
    return held;
  }

  ownsEntity(entityId: string): boolean {
    return this.ownsPartition(partitionOf(entityId, this.options.partitions));
  }

  /**
   * Says this orchestrator leaves (the first of a graceful stop) while it keeps its leases until stop(): the others
   * hear no more of it, and it takes no more partitions (its view of the others empties once it stops listening).
   */
  async leave(): Promise<void> {
    this.leaving = true;
    await this.options.presence.leave();
  }

  /** Hands everything back (graceful shutdown) so the others take over without waiting out the TTL. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.options.deadlines.cancel(TICK);
    this.options.deadlines.cancel(EXPIRY);
    await this.running;
    const leases = [...this.held];
    for (const [key, entry] of leases) await this.drop(key, entry, "stopped");
    if (leases.length > 0) this.options.log.info({ leases: leases.length }, "leases handed back on stopping");
    await this.options.presence.leave();
  }

  /** One round: renew, drop what was lost, give back more than the fair share, take free leases. */
  async tick(): Promise<void> {
    const { presence, log } = this.options;
    presence.announce();
    await this.renewAll();
    if (this.stopped) return;
    if (this.leaving) return this.armExpiry();
    try {
      const share = Math.ceil(this.options.partitions / presence.count());
      await this.handOffAbove(share);
      if (await this.mayClaim()) await this.takeFreePartitions(share);
      await this.takeFreeDuties();
    } catch (e) {
      log.warn({ err: e }, "lease bucket unreachable; keeping the leases still valid and trying again");
    }
    this.armExpiry();
  }

  private holds(key: string): boolean {
    return this.valid(key) !== undefined;
  }

  /** The lease held under `key` while it still runs on this clock. */
  private valid(key: string): HeldLease | undefined {
    const entry = this.held.get(key);
    return entry !== undefined && this.options.table.holds(entry.lease) ? entry.lease : undefined;
  }

  private async renewAll(): Promise<void> {
    const { table } = this.options;
    await Promise.all(
      [...this.held].map(async ([key, entry]) => {
        const renewal = await table.renew(entry.lease);
        if (renewal === "lost") await this.drop(key, entry, table.holds(entry.lease) ? "taken" : "expired");
      }),
    );
  }

  private async handOffAbove(share: number): Promise<void> {
    const surplus = [...this.held].filter(([, e]) => "partition" in e.owned).slice(share);
    for (const [key, entry] of surplus) await this.drop(key, entry, "handed-off");
    if (surplus.length > 0)
      this.options.log.info({ partitions: surplus.map(([key]) => key), share }, "partition leases handed off");
  }

  /** Whether partitions may be taken on this tick: not on the first one while others hold some. */
  private async mayClaim(): Promise<boolean> {
    if (!this.joining) return true;
    this.joining = false;
    const { table, partitions, log } = this.options;
    const holder = await table.anotherHolder([...Array(partitions).keys()].map(partitionKey));
    if (holder === undefined) return true;
    log.info(
      { holder, members: this.options.presence.count() },
      "other orchestrators hold partitions: taking a share on the next tick, once every member has answered",
    );
    return false;
  }

  private async takeFreePartitions(share: number): Promise<void> {
    const { table, partitions } = this.options;
    let mine = [...this.held.values()].filter((e) => "partition" in e.owned).length;
    if (mine >= share) return;
    // Each free lease is found by trying to create it: a refusal is fast and needs no consumer
    // (listing keys does, and that stalls while the bucket's stream is electing a leader).
    // Start where this owner's name points, so owners starting together do not all race for partition 0.
    const first = partitionOf(table.owner, partitions);
    const taken: number[] = [];
    try {
      for (let i = 0; i < partitions && mine < share; i++) {
        const p = (first + i) % partitions;
        if (this.held.has(partitionKey(p))) continue;
        if (await this.take(partitionKey(p), { partition: p })) {
          mine++;
          taken.push(p);
        }
      }
    } finally {
      // One line for the round, not one per partition (a whole cluster starting takes them all at once).
      if (taken.length > 0) this.options.log.info({ partitions: taken, held: mine, share }, "partition leases taken");
    }
  }

  private async takeFreeDuties(): Promise<void> {
    for (const duty of this.options.duties) {
      if (!this.held.has(dutyKey(duty))) await this.take(dutyKey(duty), { duty });
    }
  }

  private async take(key: string, owned: Owned): Promise<boolean> {
    const lease = await this.options.table.acquire(key);
    if (!lease || this.stopped) {
      if (lease) await this.options.table.release(lease);
      return false;
    }
    this.held.set(key, { owned, lease });
    this.options.log.debug({ lease: key, epoch: lease.epoch }, "lease taken");
    this.options.listener.gained(owned, lease.epoch);
    return true;
  }

  private async drop(
    key: string,
    entry: { owned: Owned; lease: HeldLease },
    why: "expired" | "taken" | "handed-off" | "stopped",
  ): Promise<void> {
    if (this.held.get(key) !== entry) return;
    this.held.delete(key);
    // Stop acting first: after the release another owner may start at once. The release is a delete
    // at the revision this owner last wrote, so it frees a lease that ran out only on this clock and
    // is refused for one another owner already took.
    this.options.listener.lost(entry.owned, why);
    // A lease lost to time or to another owner is news; one handed back is summed up by the caller.
    const level = why === "expired" || why === "taken" ? "info" : "debug";
    this.options.log[level]({ lease: key, epoch: entry.lease.epoch, why }, "lease dropped");
    await this.options.table.release(entry.lease);
  }

  /**
   * A lease whose renewals keep failing must be dropped when it runs out on this clock, even if
   * no tick happens then (the bucket is slow to answer): a timer at the earliest validUntil.
   */
  private armExpiry(): void {
    const { clock, table, deadlines } = this.options;
    let soonest = Number.POSITIVE_INFINITY;
    for (const { lease } of this.held.values()) soonest = Math.min(soonest, table.remaining(lease));
    if (soonest === Number.POSITIVE_INFINITY) return deadlines.cancel(EXPIRY);
    deadlines.set(EXPIRY, clock.now() + Math.max(1, soonest), () => {
      for (const [key, entry] of [...this.held]) {
        if (!table.holds(entry.lease)) void this.drop(key, entry, "expired");
      }
      this.armExpiry();
    });
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.options.deadlines.set(TICK, this.options.clock.now() + delayMs, () => {
      this.running = this.tick().finally(() => this.schedule(this.options.tickMs));
    });
  }
}
