import type { Actor } from "../../events/catalog/event-metadata.ts";
import { deterministicId } from "../../events/store/deterministic-id.ts";

/**
 * Who asks the jobs workflow for a placement from outside it (the node drain), and why. `actor` goes on what the
 * placement stores; `idSeed` seeds the command's id, kept apart from the actor so that a change of actor never
 * changes an id a replay derives.
 */
export interface PlacementBy {
  readonly actor: Actor;
  readonly idSeed: string;
  readonly reason: string;
  readonly causationId: string;
  readonly correlationId: string;
}

/** The id of the placement command `by` asks for: the same for the same asker, job and cause, whoever the actor. */
export const placementCommandId = (jobId: string, by: PlacementBy): string =>
  deterministicId(by.idSeed, jobId, by.causationId);
