import type { Logger } from "pino";
import { ShoalError } from "../errors/shoal-error.ts";
import { TokenBucket } from "../limits/token-bucket.ts";
import { REFUSAL_LOG_INTERVAL_MS } from "../logging/refusal-log.ts";
import type { DeadlineScheduler } from "./deadline-scheduler.ts";

/** Orchestrator.NodeManager.MaxRegistrationsPerSecond, RegistrationBurst and MaxPendingNodes. */
export interface RegistrationLimits {
  /** New registrations per second, sustained; 0 for no limit. */
  readonly maxRegistrationsPerSecond: number;
  /** New registrations that may pass at once after a quiet spell. */
  readonly registrationBurst: number;
  /** Nodes awaiting approval at most (manual approval only); 0 for no limit. */
  readonly maxPendingNodes: number;
}

/** Where the refusals' summary goes: one line per interval, on the orchestrator's one clock. */
export interface AdmissionLog {
  readonly logger: Logger;
  readonly deadlines: DeadlineScheduler;
  readonly intervalMs?: number;
}

/**
 * A registration admission refused. The admission logs these itself (a count per interval), so
 * whoever answers the node does not log each one again.
 */
export class AdmissionRefusal extends ShoalError {}

const SUMMARY_DEADLINE = "registration-admission-summary";

/**
 * Admission of *new* registrations (node ids not currently registered): a rate, and a cap on
 * PENDING nodes so that a flood of fake nodes under manual approval cannot grow without bound.
 * Known nodes re-registering, heartbeats and reports never come here.
 *
 * Refusals are not logged one by one (a fleet joining faster than the rate would write a line per
 * refused attempt): the first refusal opens an interval, and when it ends one line says how many
 * were refused, for which reason, and how many were admitted meanwhile.
 */
export class RegistrationAdmission {
  private readonly bucket: TokenBucket | undefined;
  /** Admitted and not yet finished: under manual approval each may become one more PENDING node. */
  private inFlight = 0;
  /** Since the first refusal of the open interval; undefined while none is open. */
  private interval: { startedAt: number; admitted: number; overRate: number; overPending: number } | undefined;

  constructor(
    private readonly limits: RegistrationLimits,
    private readonly clock: { now(): number },
    private readonly log?: AdmissionLog,
    /**
     * This orchestrator's share of the cluster's registrations (its partitions over all of them): it admits that
     * share of the rate and burst, so the limits hold for the cluster as a whole. 1 for a sole orchestrator.
     */
    private readonly share: () => number = () => 1,
  ) {
    this.bucket =
      limits.maxRegistrationsPerSecond > 0
        ? new TokenBucket({ ratePerSecond: limits.maxRegistrationsPerSecond, burst: limits.registrationBurst }, clock)
        : undefined;
  }

  /**
   * Admits one new registration or throws the refusal: Unavailable with a retry hint when over
   * the rate, Forbidden when too many nodes await approval. The rate is checked first, so that a
   * flood costs O(1) per message; `countPending` runs only for what the rate lets through.
   * Call the returned function once the registration is stored or has failed.
   */
  admit(nodeId: string, manualApproval: boolean, countPending: () => number): () => void {
    const share = this.share();
    // Owning nothing (between leases), it answers no node's requests anyway.
    const take = this.bucket?.take(share > 0 ? 1 / share : Number.POSITIVE_INFINITY);
    if (take && !take.ok) {
      const seconds = Math.max(1, Math.ceil(take.retryAfterMs / 1000));
      this.refused("rate");
      throw new AdmissionRefusal({
        kind: "Unavailable",
        message:
          "too many new nodes registering (Orchestrator.NodeManager." +
          `MaxRegistrationsPerSecond=${this.limits.maxRegistrationsPerSecond}, ` +
          `RegistrationBurst=${this.limits.registrationBurst}); try again in ${seconds}s`,
        retryAfterSeconds: seconds,
      });
    }
    const max = this.limits.maxPendingNodes;
    if (manualApproval && max > 0) {
      const pending = countPending() + this.inFlight;
      if (pending >= max) {
        this.refused("pending");
        throw new AdmissionRefusal({
          kind: "Forbidden",
          message:
            `cannot register node ${nodeId}: the limit of ${max} nodes awaiting approval ` +
            "(Orchestrator.NodeManager.MaxPendingNodes) is reached. An operator must approve, reject or delete " +
            "pending nodes (shoal node list --filter-approval=pending) or raise the limit",
        });
      }
    }
    if (this.interval) this.interval.admitted++;
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
    };
  }

  private refused(reason: "rate" | "pending"): void {
    const log = this.log;
    if (!log) return;
    if (!this.interval) {
      this.interval = { startedAt: this.clock.now(), admitted: 0, overRate: 0, overPending: 0 };
      log.deadlines.set(SUMMARY_DEADLINE, this.clock.now() + (log.intervalMs ?? REFUSAL_LOG_INTERVAL_MS), () =>
        this.flush(),
      );
    }
    if (reason === "rate") this.interval.overRate++;
    else this.interval.overPending++;
  }

  /** Writes the open interval's line, if one is open (at its end, and when the orchestrator stops). */
  flush(): void {
    const interval = this.interval;
    if (!interval || !this.log) return;
    this.interval = undefined;
    this.log.deadlines.cancel(SUMMARY_DEADLINE);
    const { maxRegistrationsPerSecond, registrationBurst, maxPendingNodes } = this.limits;
    this.log.logger.warn(
      {
        refused: interval.overRate + interval.overPending,
        admitted: interval.admitted,
        byReason: { MaxRegistrationsPerSecond: interval.overRate, MaxPendingNodes: interval.overPending },
        overMs: this.clock.now() - interval.startedAt,
        limits: { maxRegistrationsPerSecond, registrationBurst, maxPendingNodes },
      },
      "new nodes refused registration (over the rate or the PENDING cap); they retry",
    );
  }
}
