import { Schema } from "effect";
import { NodeId } from "./node-info.ts";

/**
 * The records the node-reactions workflow keeps in its stream `workflow-node-reactions` besides its
 * steps: the queue of silent nodes, so that a restart folds it back (docs/events.md, Workflow steps).
 */

/** Where a waiting node stands: back (HEALTHY), still silent, rejected, or gone. */
export const WaitingStanding = Schema.Literal("HEALTHY", "UNHEALTHY", "UNKNOWN", "REJECTED", "GONE");

/** The periodic check found the node silent with work: it waits its turn. */
export const NodeLossQueued = Schema.Struct({ NodeID: NodeId, Reason: Schema.String });

/**
 * Its turn came: stored before its work is lost. `Tokens`: the eviction bucket after it (a
 * fraction, a hair below zero after rounding).
 */
export const NodeLossReleased = Schema.Struct({
  NodeID: NodeId,
  Health: WaitingStanding,
  Tokens: Schema.Number.pipe(Schema.finite()),
});

/** It no longer waits: back, rejected or gone before its turn (null: the look found no standing for it). */
export const NodeLossWithdrawn = Schema.Struct({ NodeID: NodeId, Standing: Schema.NullOr(WaitingStanding) });

export const NODE_REACTION_RECORD_SCHEMAS = { NodeLossQueued, NodeLossReleased, NodeLossWithdrawn };

export type NodeReactionRecordType = keyof typeof NODE_REACTION_RECORD_SCHEMAS;
export const NODE_REACTION_RECORD_TYPES = Object.keys(NODE_REACTION_RECORD_SCHEMAS) as NodeReactionRecordType[];

export type NodeReactionRecord = {
  [T in NodeReactionRecordType]: {
    readonly type: T;
    readonly data: (typeof NODE_REACTION_RECORD_SCHEMAS)[T]["Type"];
  };
}[NodeReactionRecordType];
