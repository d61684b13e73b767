/**
 * The nodes draining now, folded from their events in store order: each with the store position of the
 * NodeDrainStarted that began its drain (the node read model, which placement reads, must have folded it before a pass
 * moves anything, or the work could come back to the node).
 */
export type DrainingNodes = ReadonlyMap<string, number>;

/** A node event as this fold reads it. */
export interface DrainingNodeEvent {
  readonly type: string;
  readonly nodeId: string;
  readonly position: number;
}

/** The events after which a node is no longer draining. */
export const DRAIN_ENDING_EVENTS: ReadonlySet<string> = new Set([
  "NodeDrainCompleted",
  "NodeDrainDeadlineReached",
  "NodeUndrained",
  "NodeDeleted",
]);

export const initialDrainingNodes = (): DrainingNodes => new Map();

/** Most events change nothing and return the same state; a drain started or ended returns a new one. */
export function evolveDrainingNodes(state: DrainingNodes, event: DrainingNodeEvent): DrainingNodes {
  if (event.type === "NodeDrainStarted") return new Map(state).set(event.nodeId, event.position);
  if (!DRAIN_ENDING_EVENTS.has(event.type) || !state.has(event.nodeId)) return state;
  const next = new Map(state);
  next.delete(event.nodeId);
  return next;
}

/**
 * The node's actor (never behind the store) shows its drain under way before this fold has its start: kept with the
 * position its start is known at (0: the node read model holds it already). A node the fold has keeps its own.
 */
export function withDrainingNode(state: DrainingNodes, nodeId: string, position: number): DrainingNodes {
  return state.has(nodeId) ? state : new Map(state).set(nodeId, position);
}

/** The node's actor shows no drain under way: its ending event, when this fold gets to it, would drop it anyway. */
export function withoutDrainingNode(state: DrainingNodes, nodeId: string): DrainingNodes {
  if (!state.has(nodeId)) return state;
  const next = new Map(state);
  next.delete(nodeId);
  return next;
}
