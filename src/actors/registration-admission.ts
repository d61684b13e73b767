import { forbidden, unavailable } from "../errors/shoal-error.ts";
import { TokenBucket } from "../limits/token-bucket.ts";

/** Orchestrator.NodeManager.MaxRegistrationsPerSecond, RegistrationBurst and MaxPendingNodes. */
export interface RegistrationLimits {
  /** New registrations per second, sustained; 0 for no limit. */
  readonly maxRegistrationsPerSecond: number;
  /** New registrations that may pass at once after a quiet spell. */
  readonly registrationBurst: number;
  /** Nodes awaiting approval at most (manual approval only); 0 for no limit. */
  readonly maxPendingNodes: number;
}

/**
 * Admission of *new* registrations (node ids not currently registered): a rate, and a cap on
 * PENDING nodes so that a flood of fake nodes under manual approval cannot grow without bound.
 * Known nodes re-registering, heartbeats and reports never come here.
 */
export class RegistrationAdmission {
  private readonly bucket: TokenBucket | undefined;
  /** Admitted and not yet finished: under manual approval each may become one more PENDING node. */
  private inFlight = 0;

  constructor(
    private readonly limits: RegistrationLimits,
    clock: { now(): number },
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
    const take = this.bucket?.take();
    if (take && !take.ok) {
      const seconds = Math.max(1, Math.ceil(take.retryAfterMs / 1000));
      throw unavailable(
        `too many new nodes registering (Orchestrator.NodeManager.MaxRegistrationsPerSecond=${this.limits.maxRegistrationsPerSecond}, ` +
          `RegistrationBurst=${this.limits.registrationBurst}); try again in ${seconds}s`,
        seconds,
      );
    }
    const max = this.limits.maxPendingNodes;
    if (manualApproval && max > 0) {
      const pending = countPending() + this.inFlight;
      if (pending >= max) {
        throw forbidden(
          `cannot register node ${nodeId}: the limit of ${max} nodes awaiting approval (Orchestrator.NodeManager.MaxPendingNodes) is reached. ` +
            "An operator must approve, reject or delete pending nodes (shoal node list --filter-approval=pending) or raise the limit",
        );
      }
    }
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
    };
  }
}
