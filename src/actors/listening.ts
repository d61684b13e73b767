import type { Clock } from "./clock.ts";

/**
 * Since when the orchestrator has been able to hear its nodes: since it began taking their
 * reports after a start, or since its own transport last came back. Undefined while it cannot (it
 * is starting, or its NATS is down). A deadline that judges a node's silence (`listenMs`) fires
 * only once this has lasted that long: silence the orchestrator could not hear is not the node's.
 */
export class Listening {
  private from: number | undefined;
  private readonly resumed = new Set<() => void>();

  /** Starts not listening: the orchestrator resumes it once it takes nodes' reports. */
  constructor(private readonly clock: Clock) {}

  get since(): number | undefined {
    return this.from;
  }

  pause(): void {
    this.from = undefined;
  }

  /** Listening again from now (a no-op while it already is): every listener re-arms what it held. */
  resume(): void {
    if (this.from !== undefined) return;
    this.from = this.clock.now();
    for (const listener of this.resumed) listener();
  }

  onResume(listener: () => void): void {
    this.resumed.add(listener);
  }
}
