import type { Disruption, EvictionBucket } from "./eviction-rule.ts";

/** Where a waiting node stands when the reactions look: back (HEALTHY), still silent, rejected, or gone. */
export type WaitingStanding = "HEALTHY" | "UNHEALTHY" | "UNKNOWN" | "REJECTED" | "GONE";

/**
 * What changes the reactions' state. The first three come from records in the workflow's stream (a
 * step's commands, or the reactions' own NodeLoss* events); the last three are the running
 * orchestrator's own and are never stored.
 */
export type ReactionEvent =
  /** A node waits its turn (a QueueNodeLoss step, or the check's NodeLossQueued); already waiting: no change. */
  | {
      readonly type: "NodeLossQueued";
      readonly nodeId: string;
      readonly reason: string;
      readonly causationId: string;
      readonly correlationId: string;
      readonly queuedBy: string;
    }
  /** Its turn came: its work is lost now. The bucket as the release left it, at that instant. */
  | {
      readonly type: "NodeLossReleased";
      readonly nodeId: string;
      readonly health: WaitingStanding;
      readonly tokens: number;
      readonly at: number;
    }
  /** It no longer waits: back, rejected or gone before its turn (or its work was lost at once, or it is back). */
  | { readonly type: "NodeLossWithdrawn"; readonly nodeId: string; readonly standing: WaitingStanding | undefined }
  | { readonly type: "GraceHeld"; readonly until: number }
  | {
      readonly type: "RateChecked";
      readonly bucket: EvictionBucket;
      readonly disruption: Disruption;
      readonly rate: number;
    }
  | { readonly type: "LookDue"; readonly at: number | undefined };

/** The reaction events stored in the workflow's stream, under these names; the others are never stored. */
type StoredType = "NodeLossQueued" | "NodeLossReleased" | "NodeLossWithdrawn";
export type StoredReactionEvent = Extract<ReactionEvent, { type: StoredType }>;

const STORED: ReadonlySet<ReactionEvent["type"]> = new Set<StoredType>([
  "NodeLossQueued",
  "NodeLossReleased",
  "NodeLossWithdrawn",
]);

export const isStoredReactionEvent = (e: ReactionEvent): e is StoredReactionEvent => STORED.has(e.type);
