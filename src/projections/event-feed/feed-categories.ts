import { ENTITY_EVENTS } from "../../events/catalog/entity-events.ts";
import { NODE_REACTION_RECORD_TYPES } from "../../events/catalog/node-reaction-records.ts";
import { WORKFLOW_STEP_TYPES } from "../../events/catalog/workflow-steps.ts";

/** The categories the feed can be asked for: every entity kind's, and the workflows' records. */
export const FEED_CATEGORIES: readonly string[] = [...ENTITY_EVENTS.map((events) => events.category), "workflow"];

/**
 * What the feed shows when no category is asked for: the entities' events, as NATS publishes them. The workflows'
 * records explain those events (docs/events.md, Workflow steps) and show only when asked for.
 */
export const DEFAULT_FEED_CATEGORIES: readonly string[] = ENTITY_EVENTS.map((events) => events.category);

// Type names are unique across kinds (event-envelope.ts), so a category is its set of types.
const TYPES: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ...ENTITY_EVENTS.map((events) => [events.category, Object.keys(events.versions)] as const),
  ["workflow", [...WORKFLOW_STEP_TYPES, ...NODE_REACTION_RECORD_TYPES]],
]);

const CATEGORY_OF: ReadonlyMap<string, string> = new Map(
  [...TYPES].flatMap(([category, types]) => types.map((type) => [type, category] as const)),
);

export const isFeedCategory = (name: string): boolean => TYPES.has(name);

/** The event types a category's streams hold; none for a name that is not a category. */
export const typesOfCategory = (category: string): readonly string[] => TYPES.get(category) ?? [];

/** The category of an event type this Shoal knows; undefined for any other name. */
export const categoryOfType = (type: string): string | undefined => CATEGORY_OF.get(type);
