import type { NodeView } from "../node-view.ts";

const DRAIN_STATUSES = ["draining", "drained", "expired"] as const;

export interface Restrictions {
  readonly cordoned: number;
  readonly drains: readonly { readonly status: (typeof DRAIN_STATUSES)[number]; readonly count: number }[];
}

/**
 * The nodes the list holds that an operator took out of placement: cordoned, and drained (by drain status, until an
 * undrain). Kept as views change, so /metrics reads them without a walk over the fleet.
 */
export class RestrictionCounts {
  private cordoned = 0;
  private readonly drains = DRAIN_STATUSES.map(() => 0);

  /** `view` entered the list (1) or left it (−1). */
  count(view: NodeView, by: 1 | -1): void {
    if (view.cordon !== undefined) this.cordoned += by;
    if (view.drain !== undefined) this.drains[DRAIN_STATUSES.indexOf(view.drain.status)]! += by;
  }

  figures(): Restrictions {
    return {
      cordoned: this.cordoned,
      drains: DRAIN_STATUSES.map((status, i) => ({ status, count: this.drains[i]! })),
    };
  }
}
