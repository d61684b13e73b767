import type { Health, ResourceReport, Resources } from "../events/catalog/node-info.ts";
import type { InfoPrint } from "./info-print.ts";
import { NodeIdTable } from "./node-id-table.ts";

const HEALTH_CODE: Record<Health, number> = { HEALTHY: 0, UNHEALTHY: 1, UNKNOWN: 2 };
const INITIAL_CAPACITY = 1024;
const REJECTED = 1;
const CHANGING = 2;
const HAS_PRINT = 4;
const HAS_REPORT = 8;
/** Tracked by recovery and not changed since: its recovered state may still give the info print. */
const RECOVERED = 16;
/** HEALTHY and not rejected: one of the connected fleet (connectedCount). */
const CONNECTED = 32;
/** A resource report's numbers per slot: AvailableCapacity's four, QueueUsedCapacity's four, the two counts. */
const REPORT_WIDTH = 10;
const RESOURCE_KEYS = ["CPU", "Memory", "Disk", "GPU"] as const;

export interface TrackedNode {
  /** Last heartbeat received by this process, or null when none since it started. */
  readonly lastHeartbeat: number | null;
  readonly health: Health;
  readonly disconnectMs: number;
  readonly unknownMs: number;
  readonly rejected: boolean;
}

/**
 * Heartbeats and resource reports of every compute node: transient (Bacalhau keeps them in
 * memory too) and hot, so kept out of the actors in parallel typed arrays indexed by a slot per
 * node. A heartbeat is one look-up (by the id's bytes in the message, NodeIdTable) and one store
 * into a Float64Array: no allocation, no event. What it tracks changes only through the node
 * manager, when a stored event changes it.
 */
export class LivenessTracker {
  private readonly slots = new Map<string, number>();
  /** The same slots, found by an id's bytes in a message (the heartbeat hot path). */
  private readonly byBytes = new NodeIdTable();
  private ids: (string | undefined)[] = [];
  private free: number[] = [];
  private capacity = 0;
  private lastBeat = new Float64Array(0);
  private since = new Float64Array(0);
  /** When the node's health last changed (or tracking began). */
  private changedAt = new Float64Array(0);
  private disconnect = new Float64Array(0);
  private unknown = new Float64Array(0);
  private healthCode = new Uint8Array(0);
  private flags = new Uint8Array(0);
  /**
   * Each slot's last resource report, REPORT_WIDTH numbers (NaN: a field the report left out), not 3 objects per node.
   */
  private reports = new Float64Array(0);
  /** Which report a slot holds (a number never given twice), so readers can keep what they made of it. */
  private reportSeq = new Float64Array(0);
  private nextReportSeq = 1;
  /** The print of the node's stored info, when known (HAS_PRINT): its info reports are answered without its actor. */
  private printHi = new Uint32Array(0);
  private printLo = new Uint32Array(0);
  /**
   * No node's silence counts from before this instant: the orchestrator's (re)start, the moment
   * its transport came back, or the end of a stall of its own event loop.
   */
  private silenceFloor = 0;
  private connected = 0;

  get size(): number {
    return this.slots.size;
  }

  /** Nodes HEALTHY and not rejected: the fleet that reconnects at once when our NATS comes back. */
  get connectedCount(): number {
    return this.connected;
  }

  /** From now on, silence before `at` is not held against any node (`at` may lie ahead: a grace). */
  forgiveSilenceBefore(at: number): void {
    this.silenceFloor = Math.max(this.silenceFloor, at);
  }

  /** The instant no node's silence counts from before. */
  get silenceCountsFrom(): number {
    return this.silenceFloor;
  }

  slotOf(nodeId: string): number {
    return this.slots.get(nodeId) ?? -1;
  }

  /** The slot of the node whose id is spelled by `bytes[from, from + length)` (ASCII), or -1. */
  slotOfBytes(bytes: Uint8Array, from: number, length: number): number {
    return this.byBytes.find(bytes, from, length);
  }

  idOf(slot: number): string | undefined {
    return this.ids[slot];
  }

  nodeIds(): IterableIterator<string> {
    return this.slots.keys();
  }

  track(nodeId: string, now: number, node: TrackedNode): number {
    let slot = this.slots.get(nodeId);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.grow();
      this.slots.set(nodeId, slot);
      this.byBytes.set(nodeId, slot);
      this.ids[slot] = nodeId;
      this.flags[slot] = 0;
    }
    this.lastBeat[slot] = node.lastHeartbeat ?? Number.NaN;
    this.since[slot] = now;
    this.changedAt[slot] = now;
    this.setNode(slot, node);
    return slot;
  }

  /** Health, thresholds and membership changed by a stored event (heartbeat times stay). */
  update(slot: number, node: Omit<TrackedNode, "lastHeartbeat">, now: number): void {
    if (HEALTH_CODE[node.health] !== this.healthCode[slot]) this.changedAt[slot] = now;
    this.setNode(slot, node);
  }

  private setNode(slot: number, node: Omit<TrackedNode, "lastHeartbeat">): void {
    this.disconnect[slot] = node.disconnectMs;
    this.unknown[slot] = node.unknownMs;
    this.healthCode[slot] = HEALTH_CODE[node.health];
    this.flags[slot] = ((this.flags[slot] as number) & ~REJECTED) | (node.rejected ? REJECTED : 0);
    const connected = node.health === "HEALTHY" && !node.rejected;
    if (connected !== (((this.flags[slot] as number) & CONNECTED) !== 0)) {
      this.connected += connected ? 1 : -1;
      this.setFlag(slot, CONNECTED, connected);
    }
  }

  forget(nodeId: string): void {
    const slot = this.slots.get(nodeId);
    if (slot === undefined) return;
    this.slots.delete(nodeId);
    this.byBytes.delete(nodeId);
    this.ids[slot] = undefined;
    if (((this.flags[slot] as number) & CONNECTED) !== 0) this.connected--;
    this.flags[slot] = 0;
    this.free.push(slot);
  }

  beat(slot: number, now: number): void {
    this.lastBeat[slot] = now;
  }

  lastHeartbeat(slot: number): number | null {
    const t = this.lastBeat[slot] as number;
    return Number.isNaN(t) ? null : t;
  }

  /** When the node's silence began: its last heartbeat, or when this process started watching it. */
  silentSince(slot: number): number {
    const t = this.lastBeat[slot] as number;
    return Number.isNaN(t) ? (this.since[slot] as number) : t;
  }

  isHealthy(slot: number): boolean {
    return this.healthCode[slot] === 0;
  }

  isRejected(slot: number): boolean {
    return ((this.flags[slot] as number) & REJECTED) !== 0;
  }

  /** A health change is being written: a heartbeat now must look again once it is stored. */
  isChanging(slot: number): boolean {
    return ((this.flags[slot] as number) & CHANGING) !== 0;
  }

  setChanging(slot: number, changing: boolean): void {
    this.setFlag(slot, CHANGING, changing);
  }

  private setFlag(slot: number, flag: number, on: boolean): void {
    this.flags[slot] = on ? (this.flags[slot] as number) | flag : (this.flags[slot] as number) & ~flag;
  }

  /** Marks a slot recovery tracked: until its print is set or forgotten, the recovered state is its latest. */
  markRecovered(slot: number): void {
    this.setFlag(slot, RECOVERED, true);
  }

  isRecovered(slot: number): boolean {
    return ((this.flags[slot] as number) & RECOVERED) !== 0;
  }

  /** Records the print of the node's stored info, or forgets it (undefined: unknown). */
  setInfoPrint(slot: number, print: InfoPrint | undefined): void {
    this.setFlag(slot, RECOVERED, false);
    this.setFlag(slot, HAS_PRINT, print !== undefined);
    if (print === undefined) return;
    this.printHi[slot] = print.hi;
    this.printLo[slot] = print.lo;
  }

  infoPrint(slot: number): InfoPrint | undefined {
    if (((this.flags[slot] as number) & HAS_PRINT) === 0) return undefined;
    return { hi: this.printHi[slot] as number, lo: this.printLo[slot] as number };
  }

  thresholds(slot: number): { disconnectMs: number; unknownMs: number } {
    return { disconnectMs: this.disconnect[slot] as number, unknownMs: this.unknown[slot] as number };
  }

  /** The node's last resource report (a new object, equal to the one reported), or undefined for none yet. */
  resources(slot: number): ResourceReport | undefined {
    if (((this.flags[slot] as number) & HAS_REPORT) === 0) return undefined;
    const at = slot * REPORT_WIDTH;
    const r = this.reports;
    return {
      AvailableCapacity: this.readResources(at),
      QueueUsedCapacity: this.readResources(at + 4),
      RunningExecutions: r[at + 8] as number,
      EnqueuedExecutions: r[at + 9] as number,
    };
  }

  /**
   * Changes whenever the slot's report does, and is never the same for two reports (0: none):
   * reports are rebuilt on every read, so readers that keep what they made of one (the node
   * list's capacity text) compare this instead of the object.
   */
  reportVersion(slot: number): number {
    return ((this.flags[slot] as number) & HAS_REPORT) === 0 ? 0 : (this.reportSeq[slot] as number);
  }

  setResources(slot: number, report: ResourceReport): void {
    const at = slot * REPORT_WIDTH;
    this.writeResources(at, report.AvailableCapacity);
    this.writeResources(at + 4, report.QueueUsedCapacity);
    this.reports[at + 8] = report.RunningExecutions;
    this.reports[at + 9] = report.EnqueuedExecutions;
    this.reportSeq[slot] = this.nextReportSeq++;
    this.setFlag(slot, HAS_REPORT, true);
  }

  private writeResources(at: number, resources: Resources): void {
    for (let i = 0; i < 4; i++) this.reports[at + i] = resources[RESOURCE_KEYS[i] as keyof Resources] ?? Number.NaN;
  }

  private readResources(at: number): Resources {
    const out: { -readonly [K in keyof Resources]: number } = {};
    for (let i = 0; i < 4; i++) {
      const v = this.reports[at + i] as number;
      if (!Number.isNaN(v)) out[RESOURCE_KEYS[i] as keyof Resources] = v;
    }
    return out;
  }

  /** The next instant at which the node's health must change unless it heartbeats, or undefined for none. */
  deadline(slot: number): number | undefined {
    const silent = this.silentSince(slot);
    const disconnect = this.disconnect[slot] as number;
    switch (this.healthCode[slot]) {
      case 0:
        return Math.max(silent, this.silenceFloor) + disconnect;
      case 1: {
        // Turned UNHEALTHY after the floor: it was healthy then, so its silence counts from the floor.
        // Already UNHEALTHY at the floor: its silence stands, but it gets a full DisconnectTimeout.
        const unknown = this.unknown[slot] as number;
        return (this.changedAt[slot] as number) > this.silenceFloor
          ? Math.max(silent, this.silenceFloor) + unknown
          : Math.max(silent + unknown, this.silenceFloor + disconnect);
      }
      default:
        return undefined;
    }
  }

  private grow(): number {
    const slot = this.capacity;
    if (slot >= this.lastBeat.length) {
      const next = Math.max(INITIAL_CAPACITY, this.lastBeat.length * 2);
      const widen = <T extends Float64Array | Uint32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
        const b = make(next);
        b.set(a);
        return b;
      };
      this.lastBeat = widen(this.lastBeat, (n) => new Float64Array(n));
      this.since = widen(this.since, (n) => new Float64Array(n));
      this.changedAt = widen(this.changedAt, (n) => new Float64Array(n));
      this.disconnect = widen(this.disconnect, (n) => new Float64Array(n));
      this.unknown = widen(this.unknown, (n) => new Float64Array(n));
      this.healthCode = widen(this.healthCode, (n) => new Uint8Array(n));
      this.flags = widen(this.flags, (n) => new Uint8Array(n));
      this.printHi = widen(this.printHi, (n) => new Uint32Array(n));
      this.printLo = widen(this.printLo, (n) => new Uint32Array(n));
      this.reports = widen(this.reports, (n) => new Float64Array(n * REPORT_WIDTH));
      this.reportSeq = widen(this.reportSeq, (n) => new Float64Array(n));
    }
    this.capacity++;
    return slot;
  }
}
