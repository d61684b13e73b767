import type { JetStreamManager } from "nats";
import { entityEventsOf } from "../../src/events/catalog/entity-events.ts";
import type { Lease } from "../../src/events/catalog/event-metadata.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { categoryOf, entityIdOf } from "../../src/events/streams.ts";
import { EVENTS_STREAM, EVENTS_SUBJECTS, eventSubject } from "../../src/transport/subjects.ts";

/** What several orchestrators sharing one store must never leave in it, read back from the store in store order. */

/** The partition and epoch an owner recorded on the event (none: not written under a partition's lease). */
export const leaseOf = (e: RecordedEvent): Lease | undefined => (e.metadata as { lease?: Lease } | undefined)?.lease;

const where = (e: RecordedEvent) => `${e.stream}@${e.revision} ${e.type}`;

/**
 * Events written under an older lease of their partition than one stored before them: two owners of one partition
 * acting at once, the former one after it had lost the partition. Epochs only grow from owner to owner.
 */
export function epochsGoingBack(events: readonly RecordedEvent[]): string[] {
  const newest = new Map<number, number>();
  const found: string[] = [];
  for (const e of events) {
    const lease = leaseOf(e);
    if (lease === undefined) continue;
    const seen = newest.get(lease.partition) ?? 0;
    if (lease.epoch < seen)
      found.push(`${where(e)} under epoch ${lease.epoch} of partition ${lease.partition}, after epoch ${seen}`);
    else newest.set(lease.partition, lease.epoch);
  }
  return found;
}

/** Node events that may follow one of their own type: reports and settings, not moves of the node's chart. */
const REPEATABLE = new Set(["NodeInfoUpdated", "NodeLabelsSet", "NodeCredentialBound", "NodeCredentialRevoked"]);

/**
 * One transition stored twice: an entity event right after one of the same type in its stream (as two orchestrators
 * deciding the same change would leave it), except for the node events above. No chart of a job or an execution
 * leads from a state back into itself, and a node's health moves only between different states.
 */
export function transitionsTwice(events: readonly RecordedEvent[]): string[] {
  const last = new Map<string, string>();
  const found: string[] = [];
  for (const e of events) {
    if (entityEventsOf(categoryOf(e.stream)) === undefined) continue;
    if (last.get(e.stream) === e.type && !REPEATABLE.has(e.type)) found.push(where(e));
    last.set(e.stream, e.type);
  }
  return found;
}

/** Event ids stored more than once. */
export function idsTwice(events: readonly RecordedEvent[]): string[] {
  const seen = new Set<string>();
  return events.filter((e) => seen.has(e.id) || !seen.add(e.id)).map((e) => `${where(e)} (${e.id})`);
}

/** How many messages each SHOAL_EVENTS subject must hold: one per stored entity event. */
export function subjectsOf(events: readonly RecordedEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) {
    const category = categoryOf(e.stream);
    if (entityEventsOf(category) === undefined) continue;
    const subject = eventSubject(category, entityIdOf(e.stream), e.type);
    counts[subject] = (counts[subject] ?? 0) + 1;
  }
  return counts;
}

/** How many messages each subject of SHOAL_EVENTS holds. */
export async function publishedSubjects(jsm: JetStreamManager): Promise<Record<string, number>> {
  const info = await jsm.streams.info(EVENTS_STREAM, { subjects_filter: EVENTS_SUBJECTS });
  return { ...info.state.subjects };
}

/** The store positions of the entity events, in store order: what SHOAL_EVENTS must hold, each once. */
export const entityPositions = (events: readonly RecordedEvent[]): number[] =>
  events.filter((e) => entityEventsOf(categoryOf(e.stream)) !== undefined).map((e) => e.position);

/** What SHOAL_EVENTS holds, in stream order: each message's Shoal-Position. */
export async function streamPositions(jsm: JetStreamManager): Promise<number[]> {
  const info = await jsm.streams.info(EVENTS_STREAM);
  const positions: number[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(EVENTS_STREAM, { seq });
    positions.push(Number(m.header.get("Shoal-Position")));
  }
  return positions;
}
