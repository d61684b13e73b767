import type { ClusterEvent } from "../projections/cluster-event.ts";

/** Who caused a stored event, `type:id` (`operator:alice`, `node:n-1`); `-` for an event stored without one. */
export function eventActor(e: ClusterEvent): string {
  const actor = e.metadata.actor as { type?: unknown; id?: unknown } | undefined;
  return actor === undefined ? "-" : `${String(actor.type ?? "?")}:${String(actor.id ?? "?")}`;
}

/** The reason recorded with a stored event, or nothing. */
export const eventReason = (e: ClusterEvent): string =>
  typeof e.metadata.reason === "string" ? e.metadata.reason : "";
