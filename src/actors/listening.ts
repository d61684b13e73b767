import type { Clock } from "./clock.ts";

/**
 * Whether the orchestrator can hear its nodes, and since when: from the moment it takes their
 * reports after a start (its subscriptions are on the server), or since its own transport last
 * came back. Not while it is starting, nor while its NATS is down. Silence it could not hear is
 * never a node's: node health, the silent-node queue and every deadline that judges a node's
 * silence (`listenMs`) go by this one state.
 */
export class Listening {
  private started = false;
  private down: string | undefined;
  private from: number | undefined;
  private readonly resumed = new Set<(why: string) => void>();
  private readonly paused = new Set<(reason: string) => void>();

  /** Starts not listening: `begin()` ends start-up. */
  constructor(private readonly clock: Clock) {}

  /** Listening from now: for a component used on its own, with no start-up to wait for. */
  static begun(clock: Clock): Listening {
    const listening = new Listening(clock);
    listening.begin();
    return listening;
  }

  /** When listening began; undefined while the orchestrator cannot hear its nodes. */
  get since(): number | undefined {
    return this.from;
  }

  /** Why the transport is down, or undefined while it is up (or not known to be down). */
  get transportDownReason(): string | undefined {
    return this.down;
  }

  /** Start-up is over: a report sent from now is heard. Once; later calls change nothing. */
  begin(): void {
    if (this.started) return;
    this.started = true;
    if (this.down === undefined) this.resume("listening for heartbeats");
  }

  /** The orchestrator's own transport (its NATS connection or embedded server) is down. */
  transportDown(reason: string): void {
    if (this.down !== undefined) return;
    this.down = reason;
    this.from = undefined;
    for (const listener of this.paused) listener(reason);
  }

  transportUp(): void {
    if (this.down === undefined) return;
    this.down = undefined;
    if (this.started) this.resume("transport back");
  }

  /** Called, in the order registered, each time listening begins again: with why. */
  onResume(listener: (why: string) => void): void {
    this.resumed.add(listener);
  }

  /** Called each time the transport goes down (starting or not): with its reason. */
  onPause(listener: (reason: string) => void): void {
    this.paused.add(listener);
  }

  private resume(why: string): void {
    this.from = this.clock.now();
    for (const listener of this.resumed) listener(why);
  }
}
