import { statfsSync } from "node:fs";
import { Empty, type NatsConnection } from "nats";
import type { Logger } from "pino";
import type { CheckResult, HealthCheck } from "../api/agent/health-check.ts";
import { within } from "../lifecycle/within.ts";
import type { DeadlineScheduler } from "../actors/deadline-scheduler.ts";
import type { EmbeddedNatsServer } from "../transport/embedded-nats-server.ts";

const PROBE_EVERY_MS = 5_000;
const PROBE_TIMEOUT_MS = 2_000;
/** Probes in a row that got no answer before JetStream counts as stuck (not merely slow). */
const STUCK_AFTER = 3;
/** What the store asks of its own disk at start: room for JetStream to recover its files and go on. */
const MIN_FREE_BYTES = 16 * 1024 * 1024;

export interface JetStreamWatchOptions {
  /** The event publisher's connection: the probe is a JetStream call, which a stuck JetStream stalls. */
  readonly nc: NatsConnection;
  /** The orchestrator's main connection: a server that does not answer it either is down, not its JetStream. */
  readonly core: NatsConnection;
  /** The embedded server, restarted when its JetStream is stuck; none on an external NATS (reported only). */
  readonly server?: EmbeddedNatsServer;
  /** The embedded server's JetStream directory: it is restarted only once that disk has room again. */
  readonly storeDir?: string;
  readonly logger: Logger;
  /** The orchestrator's one deadline heap, which times the probes. */
  readonly deadlines: Pick<DeadlineScheduler, "every">;
  readonly probeEveryMs?: number;
  readonly minFreeBytes?: number;
}

function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/**
 * Whether JetStream answers (its account info, the cheapest JetStream call), for /agent/ready and
 * to get it going again. nats-server 2.9 can deadlock a stream when a write to it fails on a full
 * disk: it then answers nothing about JetStream, and freeing space does not free it. Only a new
 * process does, so an embedded server whose JetStream stopped answering is restarted once its
 * disk has room (its JetStream recovers from its files; the publisher resends from its
 * checkpoint and JetStream's duplicate window drops what it already holds).
 */
export class JetStreamWatch implements HealthCheck {
  readonly name = "jetstream";
  private probing: Promise<CheckResult> | undefined;
  private unanswered = 0;
  private stopProbes: (() => void) | undefined;
  private waitingForRoom = false;
  /** When the current run of unanswered probes began. */
  private failingSince = 0;

  constructor(private readonly options: JetStreamWatchOptions) {}

  start(): void {
    this.stopProbes = this.options.deadlines.every("jetstream-probe", this.options.probeEveryMs ?? PROBE_EVERY_MS, () =>
      this.tick(),
    );
  }

  stop(): void {
    this.stopProbes?.();
    this.stopProbes = undefined;
  }

  check(): Promise<CheckResult> {
    this.probing ??= this.probe().finally(() => (this.probing = undefined));
    return this.probing;
  }

  private async probe(): Promise<CheckResult> {
    const { nc } = this.options;
    const answer = nc.request("$JS.API.INFO", Empty, { timeout: PROBE_TIMEOUT_MS }).then(
      (msg): CheckResult => {
        let info: { error?: { description?: string } };
        try {
          info = msg.json();
        } catch {
          return { ok: false, reason: "JetStream answered its account info with something that is not JSON" };
        }
        return info.error === undefined
          ? { ok: true, reason: "answering" }
          : { ok: false, reason: `JetStream refuses its account info: ${info.error.description ?? "no reason given"}` };
      },
      () => undefined,
    );
    const result = await within(answer, PROBE_TIMEOUT_MS + 1_000);
    // An answer, even a refusal, is a JetStream that works; silence (or no responders: JetStream
    // off) is what a restart is for.
    if (result.ok && result.value !== undefined) {
      this.unanswered = 0;
      return result.value;
    }
    this.unanswered++;
    return this.explained({ ok: false, reason: `JetStream did not answer within ${PROBE_TIMEOUT_MS}ms` });
  }

  /** A failing result says what is done about it. */
  private explained(result: CheckResult): CheckResult {
    if (this.options.server === undefined || this.options.storeDir === undefined) return result;
    const free = freeBytes(this.options.storeDir);
    const min = this.options.minFreeBytes ?? MIN_FREE_BYTES;
    if (free !== undefined && free < min) {
      return {
        ok: false,
        reason: `${result.reason}; its disk has ${Math.floor(free / 1024)} KiB free: the embedded nats-server is restarted once it has ${min / 1024 / 1024} MiB`,
      };
    }
    return result;
  }

  private async tick(): Promise<void> {
    const { server, storeDir, logger, core } = this.options;
    const probedAt = Date.now();
    const result = await this.check();
    if (result.ok) {
      if (this.waitingForRoom) logger.info("JetStream answers again");
      this.waitingForRoom = false;
      return;
    }
    if (this.unanswered === 1) this.failingSince = probedAt;
    // A server that was (re)started since the silence began, or that answers nothing at all, is
    // an outage of NATS (TransportWatch's), not a stuck JetStream.
    if (server !== undefined && (!server.state.running || server.state.since > this.failingSince)) {
      this.unanswered = 0;
      return;
    }
    if (this.unanswered < STUCK_AFTER || server === undefined || storeDir === undefined) {
      if (this.unanswered === STUCK_AFTER)
        logger.error({ reason: result.reason }, "JetStream does not answer; cluster events wait");
      return;
    }
    const coreAnswers = await within(core.rtt(), PROBE_TIMEOUT_MS).then(
      (r) => r.ok,
      () => false,
    );
    if (!coreAnswers) {
      this.unanswered = 0;
      return;
    }
    const free = freeBytes(storeDir);
    const min = this.options.minFreeBytes ?? MIN_FREE_BYTES;
    if (free === undefined || free < min) {
      if (!this.waitingForRoom)
        logger.error(
          { reason: result.reason, storeDir, freeBytes: free },
          "JetStream does not answer and its disk is (nearly) full; restarting the embedded nats-server once it has room",
        );
      this.waitingForRoom = true;
      return;
    }
    this.waitingForRoom = false;
    this.unanswered = 0;
    server.restartStuck(`its JetStream did not answer ${STUCK_AFTER} probes in a row (${result.reason})`);
  }
}
