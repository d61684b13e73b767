import type { ReactionEvent } from "./reaction-events.ts";
import type { ReactionsState, WaitingNode } from "./reactions-state.ts";

/** One event into the state. */
export function evolveReactions(state: ReactionsState, event: ReactionEvent): ReactionsState {
  return evolveReactionsAll(state, [event]);
}

/**
 * Many events into the state, copying the queue once: a partition queues thousands of nodes, and a
 * copy per event would cost the square of them.
 */
export function evolveReactionsAll(state: ReactionsState, events: readonly ReactionEvent[]): ReactionsState {
  let waiting: Map<string, WaitingNode> | undefined;
  const queue = (): Map<string, WaitingNode> => (waiting ??= new Map(state.waiting));
  let { bucket, graceUntil, disruption, nextLookAt } = state;
  for (const e of events) {
    switch (e.type) {
      case "NodeLossQueued":
        // First come first: a node queued again (a replayed step, the check) keeps its place and its first reason.
        if (!(waiting ?? state.waiting).has(e.nodeId)) {
          const { nodeId, reason, causationId, correlationId, queuedBy } = e;
          queue().set(nodeId, { nodeId, reason, causationId, correlationId, queuedBy });
        }
        break;
      case "NodeLossReleased":
        if ((waiting ?? state.waiting).has(e.nodeId)) queue().delete(e.nodeId);
        bucket = { tokens: e.tokens, at: e.at };
        break;
      case "NodeLossWithdrawn":
        if ((waiting ?? state.waiting).has(e.nodeId)) queue().delete(e.nodeId);
        break;
      case "GraceHeld":
        graceUntil = Math.max(graceUntil ?? 0, e.until);
        break;
      case "RateChecked":
        bucket = e.bucket;
        disruption = e.disruption;
        break;
      case "LookDue":
        nextLookAt = e.at;
        break;
    }
  }
  return { waiting: waiting ?? state.waiting, bucket, graceUntil, disruption, nextLookAt };
}
