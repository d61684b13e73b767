import { entityEventCodec } from "./entity-event-codec.ts";
import {
  NODE_REACTION_RECORD_SCHEMAS,
  type NodeReactionRecord,
  type NodeReactionRecordType,
} from "./node-reaction-records.ts";

/** Current schema version of each node-reactions record (see entityEventCodec for what a change takes). */
export const NODE_REACTION_RECORD_VERSIONS: Record<NodeReactionRecordType, number> = {
  NodeLossQueued: 1,
  NodeLossReleased: 1,
  NodeLossWithdrawn: 1,
};

const codec = entityEventCodec<NodeReactionRecord>(
  "node-reactions",
  NODE_REACTION_RECORD_SCHEMAS,
  NODE_REACTION_RECORD_VERSIONS,
);

/**
 * A record's data as stored, checked as a reader will check it (InvalidEventError naming the field
 * otherwise). Only the data: the workflow writes its own metadata, a cause only when one queued the node.
 */
export const encodeNodeReactionRecordData = codec.encodeData;
/** Validates a stored record against its schema and version; a stream holding anything else is corrupt. */
export const decodeNodeReactionRecord = codec.decode;
export const isNodeReactionRecordType = codec.isEventType;
