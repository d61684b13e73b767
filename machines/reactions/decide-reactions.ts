import { evictionStep } from "./eviction-rule.ts";
import {
  CHECK_DAEMON_MATCH,
  LOSE_NODE_WORK,
  QUEUE_NODE_LOSS,
  STOP_LOST_WORK,
  type ReactionCommand,
  type ReactionInput,
} from "./reaction-commands.ts";
import type { ReactionEvent, WaitingStanding } from "./reaction-events.ts";
import type { ReactionsState, WaitingNode } from "./reactions-state.ts";

/** While paused (a fleet mostly silent), the fleet is looked at again this often. */
export const PAUSED_RECHECK_MS = 5_000;

/** The events to fold (stored ones first recorded by the host) and the commands to carry out after them. */
export interface ReactionsDecision {
  readonly events: readonly ReactionEvent[];
  readonly commands: readonly ReactionCommand[];
}

const NOTHING: ReactionsDecision = { events: [], commands: [] };
const command = (type: typeof QUEUE_NODE_LOSS | typeof LOSE_NODE_WORK | typeof STOP_LOST_WORK, nodeId: string) => ({
  type,
  nodeId,
});

/**
 * Work follows node state (Nodes Manager epic 9–12):
 * - UNHEALTHY or UNKNOWN: the node's executions under way are lost (batch and service get a
 *   replacement elsewhere, ops fail, daemon fail and come back when the node does), at the
 *   eviction rate, which pauses when much of the fleet went silent at once;
 * - REJECTED or deleted: the same, at once (an operator's decision, not silence);
 * - HEALTHY again, or approved again: the node is told to stop what was lost with it;
 * - labels changed: daemon executions on it whose job no longer matches are stopped.
 *
 * A node input calls for a command only when the node holds work (or may still run lost work):
 * node events are many, and most nodes run nothing when their health changes. The queue itself
 * changes when the host applies the recorded step (stepReactionEvents), not here: a node event's
 * decision reads no state, so the workflow decides it as the event comes.
 */
export function decideReactions(input: ReactionInput, state: ReactionsState): ReactionsDecision {
  switch (input.type) {
    case "NodeWentSilent":
      return input.holdsWork
        ? { events: [], commands: [{ ...command(QUEUE_NODE_LOSS, input.nodeId), reason: silentReason(input) }] }
        : NOTHING;
    case "NodeRemoved":
      return input.holdsWork
        ? {
            events: [],
            commands: [{ ...command(LOSE_NODE_WORK, input.nodeId), reason: `node ${input.nodeId} was ${input.how}` }],
          }
        : NOTHING;
    case "NodeBack":
      return input.mayRunLostWork
        ? {
            events: [],
            commands: [
              { ...command(STOP_LOST_WORK, input.nodeId), reason: `node ${input.nodeId} is back (${input.how})` },
            ],
          }
        : NOTHING;
    case "LabelsChanged":
      return input.holdsDaemonWork
        ? {
            events: [],
            commands: [
              { type: CHECK_DAEMON_MATCH, nodeId: input.nodeId, reason: `node ${input.nodeId}'s labels changed` },
            ],
          }
        : NOTHING;
    case "NodeFoundSilent": {
      if (state.waiting.has(input.nodeId)) return NOTHING;
      const reason = `node ${input.nodeId} is ${input.health} (${input.why})`;
      const queued: ReactionEvent = {
        type: "NodeLossQueued",
        nodeId: input.nodeId,
        reason,
        causationId: "",
        correlationId: "",
        queuedBy: input.recordId,
      };
      return { events: [queued], commands: [] };
    }
    case "HoldUntil":
      return { events: [{ type: "GraceHeld", until: input.until }], commands: [] };
    case "Look":
      return look(input, state);
  }
}

const silentReason = (input: { nodeId: string; health: string }) => `node ${input.nodeId} became ${input.health}`;

/** Back, rejected or gone: no longer waits (a deletion's or rejection's own step loses its work at once). */
const leaves = (standing: WaitingStanding | undefined) =>
  standing === undefined || standing === "HEALTHY" || standing === "REJECTED" || standing === "GONE";

function look(input: Extract<ReactionInput, { type: "Look" }>, state: ReactionsState): ReactionsDecision {
  const events: ReactionEvent[] = [];
  const still: WaitingNode[] = [];
  // A node back (or gone: its deletion's step acts) before its turn loses nothing here.
  for (const waiting of state.waiting.values()) {
    const standing = input.standing.get(waiting.nodeId);
    if (leaves(standing)) events.push({ type: "NodeLossWithdrawn", nodeId: waiting.nodeId, standing });
    else still.push(waiting);
  }
  if (still.length === 0) return { events: [...events, { type: "LookDue", at: undefined }], commands: [] };
  const { now } = input;
  const step = evictionStep(
    still.map((w) => w.nodeId),
    input.fleet,
    input.policy,
    state.bucket,
    {
      now,
      transportDown: input.transportDown,
      ...(state.graceUntil === undefined ? {} : { graceUntil: state.graceUntil }),
    },
  );
  events.push({ type: "RateChecked", bucket: step.bucket, disruption: step.disruption, rate: step.rate });
  const commands: ReactionCommand[] = [];
  for (const waiting of still.slice(0, step.release.length)) {
    const health = input.standing.get(waiting.nodeId) as WaitingStanding;
    events.push({ type: "NodeLossReleased", nodeId: waiting.nodeId, health, tokens: step.bucket.tokens, at: now });
    commands.push({ type: "LoseSilentNodeWork", nodeId: waiting.nodeId, health, waiting });
  }
  const left = still.length - step.release.length;
  events.push({ type: "LookDue", at: left === 0 ? undefined : now + (step.nextInMs ?? PAUSED_RECHECK_MS) });
  return { events, commands };
}
