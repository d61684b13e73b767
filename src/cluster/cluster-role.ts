import type { Logger } from "pino";
import type { Lease } from "../events/catalog/event-metadata.ts";
import { DutyGate } from "./duty-gate.ts";
import type { EntityOwnership } from "./entity-ownership.ts";
import type { Owned, Ownership, OwnershipListener } from "./ownership.ts";
import { partitionOf } from "./partition-of.ts";

/** Told when this orchestrator takes a partition, and when it lets one go. */
export interface PartitionListener {
  gained(partition: number): void;
  lost(partition: number): void;
}

/**
 * This orchestrator's part in the cluster, as the modules see it: which entities it writes for, the duties it runs,
 * and word of each partition it takes or loses. A sole orchestrator (no cluster) owns every entity and holds every
 * duty from the start, so the modules run the same code either way.
 */
export class ClusterRole implements EntityOwnership, OwnershipListener {
  private readonly gates = new Map<string, DutyGate>();
  private readonly listeners: PartitionListener[] = [];
  private readonly memberListeners: ((member: string) => void)[] = [];
  private ownership: Ownership | undefined;

  constructor(
    /** Undefined: one orchestrator. */
    readonly partitions: number | undefined,
    private readonly logger: Logger,
  ) {}

  get clustered(): boolean {
    return this.partitions !== undefined;
  }

  /** The leases this role follows; set once the lease bucket is open. */
  attach(ownership: Ownership): void {
    this.ownership = ownership;
  }

  partitionOf(entityId: string): number {
    return this.partitions === undefined ? 0 : partitionOf(entityId, this.partitions);
  }

  owns(entityId: string): boolean {
    if (this.partitions === undefined) return true;
    return this.ownership?.ownsPartition(partitionOf(entityId, this.partitions)) ?? false;
  }

  leaseOf(entityId: string): Lease | undefined {
    if (this.partitions === undefined || this.ownership === undefined) return undefined;
    const partition = partitionOf(entityId, this.partitions);
    const epoch = this.ownership.epochOf(partition);
    return epoch === undefined ? undefined : { partition, epoch };
  }

  share(): number {
    if (this.partitions === undefined) return 1;
    return (this.ownership?.partitionsHeld ?? 0) / this.partitions;
  }

  /**
   * Whether this orchestrator may act for the duty right now: its gate is held and its lease still runs on this
   * clock, short of the lease table's safety margin (the gate only hears of a loss at the next tick).
   */
  holdsDuty(name: string): boolean {
    if (this.partitions === undefined) return true;
    return this.duty(name).held && (this.ownership?.ownsDuty(name) ?? false);
  }

  /** The gate of a duty: all are made before the leases are first taken (the modules ask for theirs when built). */
  duty(name: string): DutyGate {
    let gate = this.gates.get(name);
    if (!gate) {
      if (this.ownership) throw new Error(`the ${name} duty was asked for after the leases were first taken`);
      gate = new DutyGate(name, this.logger, !this.clustered);
      this.gates.set(name, gate);
    }
    return gate;
  }

  get duties(): readonly string[] {
    return [...this.gates.keys()];
  }

  /** What /metrics shows of this orchestrator's part (cluster mode only). */
  figures(): { partitionsHeld: number; members: number; duties: { name: string; held: boolean }[] } {
    return {
      partitionsHeld: this.ownership?.partitionsHeld ?? 0,
      members: this.ownership?.members ?? 1,
      duties: [...this.gates.values()].map((gate) => ({ name: gate.name, held: gate.held })),
    };
  }

  /** Tells the other orchestrators this one leaves (a graceful stop), keeping its leases for the rest of the stop. */
  async leave(): Promise<void> {
    await this.ownership?.leave();
  }

  onPartition(listener: PartitionListener): void {
    this.listeners.push(listener);
  }

  /** Told the NodeID of another orchestrator each time it is heard announcing itself (cluster mode only). */
  onMemberHeard(listener: (member: string) => void): void {
    this.memberListeners.push(listener);
  }

  /** Another orchestrator announced itself (Presence). */
  readonly memberHeard = (member: string): void => {
    for (const listener of this.memberListeners) listener(member);
  };

  gained(owned: Owned, epoch: number): void {
    if ("duty" in owned) {
      this.logger.info({ duty: owned.duty, epoch }, "running the duty");
      void this.gates.get(owned.duty)?.gained();
      return;
    }
    for (const listener of this.listeners) listener.gained(owned.partition);
  }

  lost(owned: Owned): void {
    if ("duty" in owned) {
      this.gates.get(owned.duty)?.lost();
      return;
    }
    for (const listener of this.listeners) listener.lost(owned.partition);
  }
}
