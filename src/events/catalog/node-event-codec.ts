import { NODE_CATEGORY } from "../streams.ts";
import { entityEvents } from "./entity-event-codec.ts";
import { NODE_EVENT_SCHEMAS, type NodeEvent, type NodeEventType } from "./node-events.ts";

/**
 * Current schema version of each node event type. A change to an event's data shape bumps its
 * version here and adds an upcaster in the codec's decode; stored events are never rewritten (entity-event-codec.ts).
 */
export const NODE_EVENT_VERSIONS: Record<NodeEventType, number> = {
  NodeRegistered: 1,
  NodeApproved: 1,
  NodeRejected: 1,
  NodeDeleted: 1,
  NodeInfoUpdated: 1,
  NodeBecameUnhealthy: 1,
  NodeBecameUnknown: 1,
  NodeBecameHealthy: 1,
  NodeCredentialBound: 1,
  NodeCredentialRevoked: 1,
  NodeCordoned: 1,
  NodeUncordoned: 1,
  NodeLabelsSet: 1,
  NodePreauthorized: 1,
  NodePreauthorizationRevoked: 1,
  NodeDrainStarted: 1,
  NodeDrainCompleted: 1,
  NodeDrainDeadlineReached: 1,
  NodeUndrained: 1,
};

/**
 * Node events, registered in ENTITY_EVENTS (entity-events.ts).
 *
 * `decodedOnRead`: the types whose data the node read model's fold (evolveNode) reads none of, only their type, the
 * state and the time. The processors' envelope decodes their data when something reads it, so a rebuild over a large
 * fleet's history does not parse it. It is a choice of how the catalog decodes, so it lives here, where the envelope
 * (which may import the catalog, not the machines) finds it; test/unit/machines/evolve-reads-no-data.test.ts folds
 * each of them with data that throws when touched, from every kind of state, and fails for a type evolveNode reads.
 */
export const nodeEvents = entityEvents<NodeEvent>({
  category: NODE_CATEGORY,
  schemas: NODE_EVENT_SCHEMAS,
  versions: NODE_EVENT_VERSIONS,
  decodedOnRead: new Set<NodeEventType>([
    "NodeApproved",
    "NodeRejected",
    "NodeDeleted",
    "NodeBecameHealthy",
    "NodeCredentialRevoked",
    "NodeUncordoned",
    "NodePreauthorizationRevoked",
    "NodeDrainCompleted",
    "NodeUndrained",
  ]),
});
const codec = nodeEvents;

export const isNodeEventType = codec.isEventType;
/**
 * Builds the event to append, checked exactly as a reader will check it: the data and metadata
 * after a JSON round trip must decode with this type's schema (the schema fast path vouches for the
 * common case without Effect's parser). A decider bug, or a bad id that slipped past every other
 * check, then fails here and nothing unreadable is ever stored.
 */
export const encodeNodeEvent = codec.encode;
/** encodeNodeEvent through Effect alone: the reference its fast path is tested against, and its fallback. */
export const encodeNodeEventBySchema = codec.encodeBySchema;
/** Validates a stored node event against its schema; a store holding anything else is corrupt. */
export const decodeNodeEvent = codec.decode;
/**
 * decodeNodeEvent for a fold: the data of the types in `onUse` (nodeEvents.decodedOnRead) decoded only when
 * read.
 */
export const decodeNodeEventForFold: (
  recorded: Parameters<typeof codec.decodeForFold>[0],
  onUse: ReadonlySet<NodeEventType>,
) => NodeEvent = codec.decodeForFold;
