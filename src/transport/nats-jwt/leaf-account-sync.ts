import type { NatsConnection } from "nats";
import type { Logger } from "pino";
import { hubLeafConnections, subjectCovers } from "./hub-leaf-connections.ts";
import type { NatsJwtGate } from "./nats-jwt-gate.ts";

interface ConnectAdvisory {
  readonly client?: { readonly kind?: string; readonly acc?: string };
}

/** What the sync needs of the operator: whose JWT, and the JWT as it stands. */
export interface AccountJwtSource {
  readonly account: string;
  readonly systemAccount: string;
  accountJwt(): string;
}

export interface LeafAccountSyncOptions {
  /** How long a leaf connection may go without interest in account updates before the sync stops waiting for it. */
  readonly giveUpMs?: number;
}

/** Where each leaf's system login stands in the current round, by the hub's `ip:port` of it. */
export interface LeafSyncState {
  readonly synced: readonly string[];
  readonly waiting: readonly string[];
  readonly gaveUp: readonly string[];
}

const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 2000;

/**
 * Keeps leaf servers' account JWT current. A leaf runs with the JWT its configuration was
 * written with (`resolver: MEMORY`) and learns of revocations only by the hub's broadcasts of
 * account updates, which reach it only while its system login is connected and its interest in
 * them has reached the hub; so a leaf started later, or back after losing the hub, is handed the
 * account JWT as it stands.
 *
 * Everything it goes by is what the hub reports, never what a leaf says (anyone holding a leaf's
 * system login could answer for another server): a leaf's system-account connection counts as
 * synced once the hub listed its interest in account updates (LEAFZ) *before* the orchestrator
 * published the current JWT on the same connection as that request, and the hub has processed
 * the publish (flush). From then on every later push reaches that leaf too, in the order it was
 * signed (every push, here or in NatsJwtGate, goes out on this one connection carrying the JWT
 * current at that instant).
 *
 * A leaf applies an update only to an account it has loaded ("jwt update skipped" otherwise, and
 * its next lookup would read the stale preloaded JWT): its Shoal account loads when its
 * Shoal-account remote is set up, before the hub sees that connection. So any leaf connection in
 * either account — and the orchestrator's own system login reconnecting (it may have missed
 * advisories) — starts a new round in which every leaf system connection is handed the JWT again.
 *
 * Runs beside NatsJwtGate's push queue: a leaf that never shows interest costs one LEAFZ request
 * per retry, and delays no join or revocation. After `giveUpMs` without interest it is logged and
 * left until the next round.
 */
export class LeafAccountSync {
  private readonly giveUpMs: number;
  /** Connections handed the JWT in this round, and those given up on. */
  private synced = new Set<string>();
  private gaveUp = new Set<string>();
  private waiting = new Map<string, number>();
  private roundStart = 0;
  private newRound = false;
  private loop: Promise<void> | undefined;
  /** Ends the back-off early: a new round, or stop. */
  private wake: (() => void) | undefined;
  private retryMs = FIRST_RETRY_MS;
  private stopped = false;
  /** The leaf system connections the hub listed at the last look. */
  private listed = new Set<string>();
  /**
   * Set when a leaf's system login announced itself: the connections listed before it. The hub
   * sends the advisory while it still authorises the login, before LEAFZ lists the connection, so
   * the round looks again until a connection outside this set is listed (or giveUpMs passes).
   */
  private awaitedBeside: ReadonlySet<string> | undefined;

  constructor(
    private readonly system: NatsConnection,
    private readonly source: AccountJwtSource,
    private readonly logger: Logger,
    options: LeafAccountSyncOptions = {},
  ) {
    this.giveUpMs = options.giveUpMs ?? 30_000;
  }

  /** Watches the hub's connect advisories and the system login's reconnects; syncs the leaves connected now. */
  start(): () => void {
    const accounts = new Set([this.source.account, this.source.systemAccount]);
    const sub = this.system.subscribe("$SYS.ACCOUNT.*.CONNECT", {
      callback: (err, msg) => {
        if (err) return;
        let advisory: ConnectAdvisory;
        try {
          advisory = JSON.parse(new TextDecoder().decode(msg.data)) as ConnectAdvisory;
        } catch {
          return;
        }
        if (advisory.client?.kind !== "Leafnode" || !accounts.has(advisory.client.acc ?? "")) return;
        if (advisory.client.acc === this.source.systemAccount) this.awaitedBeside ??= new Set(this.listed);
        void this.sync();
      },
    });
    void (async () => {
      for await (const status of this.system.status()) {
        if (this.stopped) break;
        if (status.type === "reconnect") void this.sync();
      }
    })();
    void this.sync();
    return () => {
      this.stopped = true;
      this.wake?.();
      sub.unsubscribe();
    };
  }

  /**
   * Starts a new round: every leaf system connection the hub lists is handed the current JWT. Resolves when that round
   * settles.
   */
  sync(): Promise<void> {
    this.newRound = true;
    this.wake?.();
    this.loop ??= this.run().finally(() => (this.loop = undefined));
    return this.loop;
  }

  state(): LeafSyncState {
    return { synced: [...this.synced], waiting: [...this.waiting.keys()], gaveUp: [...this.gaveUp] };
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.newRound) {
        this.newRound = false;
        this.roundStart = Date.now();
        this.synced = new Set();
        this.gaveUp = new Set();
        this.waiting = new Map();
        this.retryMs = FIRST_RETRY_MS;
      }
      const waiting = await this.step();
      if (this.newRound) continue;
      if (!waiting) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => this.wake?.(), this.retryMs);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    }
  }

  /** One look at the hub; true while some leaf is still waited for (or the hub did not answer). */
  private async step(): Promise<boolean> {
    const subject = `$SYS.REQ.ACCOUNT.${this.source.account}.CLAIMS.UPDATE`;
    let leaves;
    try {
      leaves = await hubLeafConnections(this.system, this.source.systemAccount);
    } catch (e) {
      if (Date.now() - this.roundStart > this.giveUpMs) {
        this.logger.warn(
          { err: e },
          "could not list the hub's leaf servers to hand them the current account JWT; trying again when a leaf or the orchestrator reconnects",
        );
        return false;
      }
      return true;
    }
    const now = Date.now();
    const ready: string[] = [];
    const listed = new Set<string>();
    for (const leaf of leaves) {
      listed.add(leaf.connection);
      if (this.awaitedBeside && !this.awaitedBeside.has(leaf.connection)) this.awaitedBeside = undefined;
      if (this.synced.has(leaf.connection) || this.gaveUp.has(leaf.connection)) continue;
      if (leaf.subscriptions.some((s) => subjectCovers(s, subject))) ready.push(leaf.connection);
      else if (!this.waiting.has(leaf.connection)) this.waiting.set(leaf.connection, now);
    }
    this.listed = listed;
    for (const connection of this.waiting.keys())
      if (!listed.has(connection) || ready.includes(connection)) this.waiting.delete(connection);
    if (ready.length > 0) {
      try {
        // No reply subject: nothing a leaf answers is believed. The hub has the publish once the flush returns.
        this.system.publish(subject, new TextEncoder().encode(this.source.accountJwt()));
        await this.system.flush();
      } catch (e) {
        this.logger.warn({ err: e }, "could not hand the leaf servers the current account JWT");
        return true;
      }
      for (const connection of ready) {
        this.synced.add(connection);
        this.logger.info(
          { leaf: connection, ms: Date.now() - this.roundStart },
          "leaf server connected; it holds the current account JWT",
        );
      }
    }
    for (const [connection, since] of this.waiting) {
      if (now - since <= this.giveUpMs) continue;
      this.waiting.delete(connection);
      this.gaveUp.add(connection);
      this.logger.warn(
        { leaf: connection, waitedMs: now - since },
        "a leaf server's system login shows no interest in account updates at the hub; it may admit revoked node keys until a leaf or the orchestrator reconnects",
      );
    }
    // A login that never shows up (it failed, or left at once) is looked for no longer than a mute leaf is waited for.
    if (this.awaitedBeside && now - this.roundStart > this.giveUpMs) this.awaitedBeside = undefined;
    return this.waiting.size > 0 || this.awaitedBeside !== undefined;
  }
}

/**
 * Wires a LeafAccountSync to the orchestrator's system-account connection, and pushes the
 * account JWT to the hub again whenever that connection comes back (the hub may have restarted,
 * or missed a push). Returns its stop.
 */
export function watchLeafServers(
  system: NatsConnection,
  source: AccountJwtSource,
  gate: Pick<NatsJwtGate, "republish">,
  logger: Logger,
  options?: LeafAccountSyncOptions,
): () => void {
  const stopSync = new LeafAccountSync(system, source, logger, options).start();
  let stopped = false;
  void (async () => {
    for await (const status of system.status()) {
      if (stopped) break;
      if (status.type === "reconnect")
        gate
          .republish()
          .catch((e: unknown) => logger.warn({ err: e }, "could not hand the hub the current account JWT"));
    }
  })();
  return () => {
    stopped = true;
    stopSync();
  };
}
