import type { NatsConnection, Subscription } from "nats";

export interface PresenceOptions {
  readonly nc: NatsConnection;
  readonly subject: string;
  /**
   * `<member>/<start>`: the orchestrator (its NodeID) and this start of it. A later start of a member replaces the
   * earlier one at once, so an orchestrator killed and started again is not counted twice until the first is forgotten.
   */
  readonly owner: string;
  /** A member not heard from for this long no longer counts (the lease TTL: it has lost its leases by then). */
  readonly forgetAfterMs: number;
  /** The same monotonic clock the leases use. */
  readonly elapsed: () => number;
  /** Told the member (its NodeID) on each word from another member that is not its leaving: its node's heartbeat. */
  readonly heard?: (member: string) => void;
}

/** What one message on a presence subject says: who, and whether it leaves or asks who is there. */
interface Heard {
  readonly owner: string;
  readonly leaving: boolean;
  readonly asking: boolean;
}

/**
 * Which orchestrators are alive, from announcements on a plain NATS subject. It only sizes each
 * member's fair share of the partitions, so it may be briefly wrong without harm; it is kept out
 * of the key-value bucket because listing a bucket's keys needs a consumer, and creating one times
 * out for seconds at a time while a replicated stream has lost a server. A member that starts asks
 * who is there (on `<subject>.ask`) and every member answers at once, so its view is whole within a
 * round trip instead of after each member's next tick, which drifts under load.
 */
export class Presence {
  /** By member: the start last heard from, and when. */
  private readonly heard = new Map<string, { owner: string; at: number }>();
  private readonly subscriptions: Subscription[] = [];
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();
  private left = false;

  constructor(private readonly options: PresenceOptions) {}

  /** Listens, then asks who is there. */
  start(): void {
    const { nc, subject, owner } = this.options;
    this.listen(subject, (text) =>
      text.startsWith("-")
        ? { owner: text.slice(1), leaving: true, asking: false }
        : { owner: text, leaving: false, asking: false },
    );
    // A subject of its own: members of an earlier version do not hear the question, so they cannot take it for a name.
    this.listen(`${subject}.ask`, (text) => ({ owner: text, leaving: false, asking: true }));
    nc.publish(`${subject}.ask`, this.encoder.encode(owner));
  }

  /** Says this member is alive; every tick, and in answer to a member that starts (not once it has left). */
  announce(): void {
    if (this.left) return;
    this.options.nc.publish(this.options.subject, this.encoder.encode(this.options.owner));
  }

  /** Says this member is leaving, so the others widen their share without waiting to forget it. */
  async leave(): Promise<void> {
    if (this.left) return;
    this.left = true;
    this.options.nc.publish(this.options.subject, this.encoder.encode(`-${this.options.owner}`));
    await this.options.nc.flush().catch(() => undefined);
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  /** Members heard from recently, this one included. */
  count(): number {
    const since = this.options.elapsed() - this.options.forgetAfterMs;
    for (const [member, { at }] of this.heard) if (at < since) this.heard.delete(member);
    return this.heard.size + 1;
  }

  private listen(subject: string, read: (text: string) => Heard): void {
    const subscription = this.options.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const { owner, leaving, asking } = read(this.decoder.decode(msg.data));
        if (!owner || owner.length > 200) return;
        // This member's own former start (killed, its last words still in flight) is not another member.
        const member = memberOf(owner);
        if (member === memberOf(this.options.owner)) return;
        if (!leaving) {
          this.heard.set(member, { owner, at: this.options.elapsed() });
          this.options.heard?.(member);
        } else if (this.heard.get(member)?.owner === owner) this.heard.delete(member);
        if (asking) this.announce();
      },
    });
    this.subscriptions.push(subscription);
  }
}

function memberOf(owner: string): string {
  const slash = owner.lastIndexOf("/");
  return slash > 0 ? owner.slice(0, slash) : owner;
}
