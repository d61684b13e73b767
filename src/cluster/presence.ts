import type { NatsConnection, Subscription } from "nats";

export interface PresenceOptions {
  readonly nc: NatsConnection;
  readonly subject: string;
  readonly owner: string;
  /** A member not heard from for this long no longer counts (the lease TTL: it has lost its leases by then). */
  readonly forgetAfterMs: number;
  /** The same monotonic clock the leases use. */
  readonly elapsed: () => number;
}

/**
 * Which orchestrators are alive, from announcements on a plain NATS subject. It only sizes each
 * member's fair share of the partitions, so it may be briefly wrong without harm; it is kept out
 * of the key-value bucket because listing a bucket's keys needs a consumer, and creating one times
 * out for seconds at a time while a replicated stream has lost a server.
 */
export class Presence {
  private readonly heard = new Map<string, number>();
  private subscription: Subscription | undefined;
  private readonly encoder = new TextEncoder();

  constructor(private readonly options: PresenceOptions) {}

  start(): void {
    const decoder = new TextDecoder();
    this.subscription = this.options.nc.subscribe(this.options.subject, {
      callback: (err, msg) => {
        if (err) return;
        const text = decoder.decode(msg.data);
        const leaving = text.startsWith("-");
        const owner = leaving ? text.slice(1) : text;
        if (!owner || owner.length > 200) return;
        if (owner === this.options.owner) return;
        if (leaving) this.heard.delete(owner);
        else this.heard.set(owner, this.options.elapsed());
      },
    });
  }

  /** Says this member is alive; every tick. */
  announce(): void {
    this.options.nc.publish(this.options.subject, this.encoder.encode(this.options.owner));
  }

  /** Says this member is leaving, so the others widen their share without waiting to forget it. */
  async leave(): Promise<void> {
    this.options.nc.publish(this.options.subject, this.encoder.encode(`-${this.options.owner}`));
    await this.options.nc.flush().catch(() => undefined);
    this.subscription?.unsubscribe();
  }

  /** Members heard from recently, this one included. */
  count(): number {
    const since = this.options.elapsed() - this.options.forgetAfterMs;
    for (const [owner, at] of this.heard) if (at < since) this.heard.delete(owner);
    return this.heard.size + 1;
  }
}
