import type { Lease } from "../events/catalog/event-metadata.ts";

/** Which entities this orchestrator writes for now (a partition's owner), and under which lease. */
export interface EntityOwnership {
  owns(entityId: string): boolean;
  /** The lease to record on a write for the entity; undefined for a sole orchestrator, which holds none. */
  leaseOf(entityId: string): Lease | undefined;
  /** The share of all entities this orchestrator owns now (0 to 1): what it takes of a cluster-wide limit. */
  share?(): number;
}

/** One orchestrator: it owns every entity and needs no lease. */
export const SOLE_OWNER: EntityOwnership = { owns: () => true, leaseOf: () => undefined };
