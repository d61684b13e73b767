import type { NatsConnection } from "nats";
import type { Logger } from "pino";
import type { Clock } from "../actors/clock.ts";
import type { DeadlineScheduler } from "../actors/deadline-scheduler.ts";
import type { CheckResult, HealthCheck } from "../api/agent/health-check.ts";
import { redactUrl } from "../security/redact-url.ts";
import type { EmbeddedNatsServer } from "../transport/embedded-nats-server.ts";
import { within } from "../lifecycle/within.ts";

const PING_TIMEOUT_MS = 2_000;
/**
 * A NATS server restart in a cluster costs a reconnect of some milliseconds: a warning. Still down
 * this long later, it is an outage an operator must hear of: an error.
 */
const ESCALATE_AFTER_MS = 10_000;
const STILL_DOWN = "transport:still-down";

/**
 * Whether the orchestrator's own transport works: its NATS connection (nats.js status events)
 * and, when it runs one, its embedded nats-server. Tells listeners when it goes down and comes
 * back (the node manager stops blaming nodes for silence meanwhile) and answers /agent/ready.
 */
export class TransportWatch {
  private connected = true;
  private connectionSince = Date.now();
  private stopped = false;
  private downReason: string | undefined;
  private downSince = 0;
  private readonly listeners = new Set<(downReason: string | undefined) => void>();
  private readonly reconnectListeners = new Set<() => void>();
  private unwatchServer: (() => void) | undefined;
  /** At most one ping outstanding: a wedged server would otherwise collect one per probe. */
  private ping: Promise<number> | undefined;
  /** As logged and shown by /agent/ready, which anyone may read: without its credentials. */
  private readonly url: string;

  constructor(
    private readonly nc: NatsConnection,
    url: string,
    private readonly server: EmbeddedNatsServer | undefined,
    private readonly logger: Logger,
    private readonly timing: { clock: Clock; deadlines: DeadlineScheduler; escalateAfterMs?: number },
  ) {
    this.url = redactUrl(url);
  }

  /** Starts watching; the connection is assumed up, as it has just been opened. */
  start(): void {
    this.unwatchServer = this.server?.onStateChange(() => this.update());
    void (async () => {
      for await (const status of this.nc.status()) {
        if (this.stopped) return;
        if (status.type === "disconnect" || status.type === "reconnect") {
          this.connected = status.type === "reconnect";
          this.connectionSince = Date.now();
          this.update();
          if (status.type === "reconnect") for (const listener of this.reconnectListeners) listener();
        }
      }
    })().catch((err: unknown) => this.logger.error({ err }, "stopped watching the NATS connection's status"));
  }

  /** Why the transport is down, or undefined when it is up. */
  get down(): string | undefined {
    return this.downReason;
  }

  /** Called with the reason when the transport goes down and with undefined when it is back. */
  onChange(listener: (downReason: string | undefined) => void): void {
    this.listeners.add(listener);
  }

  /** Called each time the NATS connection is re-established (the metrics count them). */
  onReconnect(listener: () => void): void {
    this.reconnectListeners.add(listener);
  }

  private update(): void {
    if (this.stopped) return;
    const serverState = this.server?.state;
    const reason =
      serverState && !serverState.running
        ? `embedded ${serverState.reason}`
        : !this.connected
          ? `NATS connection to ${this.url} lost; reconnecting`
          : undefined;
    if (reason === this.downReason) return;
    const wasDown = this.downReason !== undefined;
    this.downReason = reason;
    if (reason !== undefined) {
      if (!wasDown) this.wentDown();
      this.logger.warn({ reason }, "orchestrator transport down");
    } else {
      this.timing.deadlines.cancel(STILL_DOWN);
      const downForMs = this.timing.clock.now() - this.downSince;
      this.logger.info({ url: this.url, downForMs }, "orchestrator transport back");
    }
    // A change of reason while down (server back, connection not yet) is not news to listeners.
    if (wasDown && reason !== undefined) return;
    for (const listener of this.listeners) listener(reason);
  }

  private wentDown(): void {
    const { clock, deadlines, escalateAfterMs = ESCALATE_AFTER_MS } = this.timing;
    this.downSince = clock.now();
    deadlines.set(STILL_DOWN, this.downSince + escalateAfterMs, () => {
      if (this.downReason !== undefined && !this.stopped)
        this.logger.error(
          { reason: this.downReason, downForMs: clock.now() - this.downSince },
          "orchestrator transport still down",
        );
    });
  }

  /** "nats" (this orchestrator's connection, with a round trip) and, when embedded, "nats-server". */
  get checks(): HealthCheck[] {
    const checks: HealthCheck[] = [{ name: "nats", check: () => this.checkConnection() }];
    const server = this.server;
    if (server) {
      checks.push({
        name: "nats-server",
        check: async () => {
          const state = server.state;
          return state.running
            ? { ok: true, reason: `running (pid ${state.pid}, restarts: ${server.restarts})`, since: state.since }
            : { ok: false, reason: state.reason, since: state.since };
        },
      });
    }
    return checks;
  }

  private checkConnection(): Promise<CheckResult> {
    if (this.nc.isClosed()) return Promise.resolve({ ok: false, reason: `NATS connection to ${this.url} is closed` });
    if (!this.connected)
      return Promise.resolve({
        ok: false,
        reason: `disconnected from ${this.url}; reconnecting`,
        since: this.connectionSince,
      });
    // A stopped or wedged server keeps the socket open: only a round trip tells.
    return this.roundTrip();
  }

  private async roundTrip(): Promise<CheckResult> {
    this.ping ??= this.nc.rtt().finally(() => (this.ping = undefined));
    const answered = this.ping.then(
      (ms): CheckResult => ({
        ok: true,
        reason: `connected to ${this.url} (round trip ${Math.round(ms)}ms)`,
        since: this.connectionSince,
      }),
      (e: unknown): CheckResult => ({
        ok: false,
        reason: `NATS at ${this.url}: ${e instanceof Error ? e.message : String(e)}`,
      }),
    );
    const result = await within(answered, PING_TIMEOUT_MS);
    return result.ok
      ? result.value
      : {
          ok: false,
          reason: `NATS at ${this.url} did not answer a ping within ${PING_TIMEOUT_MS}ms`,
          since: this.connectionSince,
        };
  }

  stop(): void {
    this.stopped = true;
    this.timing.deadlines.cancel(STILL_DOWN);
    this.unwatchServer?.();
    this.listeners.clear();
    this.reconnectListeners.clear();
  }
}
