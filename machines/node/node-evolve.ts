import { initialTransition, transition } from "xstate";
import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import { nodeMachine, type NodeSnapshot } from "./node-machine.ts";

export function initialNode(nodeId: string): NodeSnapshot {
  return initialTransition(nodeMachine, { nodeId })[0];
}

/** Applies one stored event. Events that the current state does not accept leave it unchanged. */
export function applyNodeEvent(snapshot: NodeSnapshot, event: NodeEvent): NodeSnapshot {
  return transition(nodeMachine, snapshot, event)[0];
}

export function replayNode(nodeId: string, events: Iterable<NodeEvent>): NodeSnapshot {
  let snapshot = initialNode(nodeId);
  for (const e of events) snapshot = applyNodeEvent(snapshot, e);
  return snapshot;
}
