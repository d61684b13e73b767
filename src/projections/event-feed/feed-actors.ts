import type { ActorFilter } from "../../events/store/event-store.ts";

/** Who the feed can be asked about: `operator:alice`, `node:n-1`, `system:node-manager`, `workflow:jobs`. */
export const FEED_ACTOR_TYPES = ["operator", "node", "system", "workflow"] as const;
export type FeedActorType = (typeof FEED_ACTOR_TYPES)[number];

export interface FeedActor {
  readonly type: FeedActorType;
  /** Absent: every actor of the type. */
  readonly id?: string;
}

/**
 * The workflows whose actions are stored as `system:workflow-<name>` (the actor type `workflow` did not exist when
 * they were written, and events are never rewritten). test/unit/projections/event-feed.test.ts holds this list to
 * the workflows that exist.
 */
export const LEGACY_WORKFLOW_NAMES: readonly string[] = [
  "jobs",
  "node-reactions",
  "node-drain",
  "forget-deleted-nodes",
];

const LEGACY_PREFIX = "workflow-";

/**
 * The stored actors one asked-for actor stands for: itself, and for a workflow also the `system:workflow-<name>`
 * it was recorded as before, so `workflow:jobs` finds a job workflow's actions whenever they were stored.
 */
export function storeActorsOf(actor: FeedActor): ActorFilter[] {
  if (actor.type !== "workflow")
    return [actor.id === undefined ? { type: actor.type } : { type: actor.type, id: actor.id }];
  if (actor.id !== undefined)
    return [
      { type: "workflow", id: actor.id },
      { type: "system", id: LEGACY_PREFIX + actor.id },
    ];
  return [{ type: "workflow" }, ...LEGACY_WORKFLOW_NAMES.map((name) => ({ type: "system", id: LEGACY_PREFIX + name }))];
}
