import { evolveNode } from "../../machines/node/evolve-node.ts";
import { initialNodeState } from "../../machines/node/node-state.ts";
import { decodeNodeEvent } from "../events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../events/catalog/node-events.ts";
import type { RecordedEvent } from "../events/store/event-store.ts";
import type { EventEnvelope } from "./event-envelope.ts";
import { NODE_CATEGORY, categoryOf, entityIdOf } from "../events/streams.ts";
import { nodeViewOf, type NodeView } from "./node-view.ts";

/** Told of every view change, after it is applied (an index of the views, say). */
export type NodeViewListener = (nodeId: string, before: NodeView | undefined, after: NodeView) => void;

/** All node views, folded in store order with the node decider's evolve. */
export class NodeViews {
  private readonly views = new Map<string, NodeView>();

  constructor(private readonly listener?: NodeViewListener) {}

  handle = (recorded: RecordedEvent): void => {
    if (categoryOf(recorded.stream) !== NODE_CATEGORY) return;
    this.apply(recorded, decodeNodeEvent(recorded));
  };

  /** An event the processor host has already decoded (once, for every processor). */
  handleEnvelope = (envelope: EventEnvelope): void => {
    if (categoryOf(envelope.recorded.stream) !== NODE_CATEGORY) return;
    const event = envelope.event;
    if (event) this.apply(envelope.recorded, event);
  };

  private apply(recorded: RecordedEvent, event: NodeEvent): void {
    const nodeId = entityIdOf(recorded.stream);
    const before = this.views.get(nodeId);
    const state = evolveNode(before ?? initialNodeState(nodeId), event, recorded.time);
    const next = nodeViewOf(state, recorded.revision);
    if (!next) return;
    this.views.set(nodeId, next);
    this.listener?.(nodeId, before, next);
  }

  /** Starts from a snapshot's views (before any event is handled); the listener is told of each. */
  seed(views: readonly NodeView[]): void {
    for (const view of views) {
      const before = this.views.get(view.nodeId);
      this.views.set(view.nodeId, view);
      this.listener?.(view.nodeId, before, view);
    }
  }

  /** Every view now, deleted ones included: what a node-state snapshot holds. */
  all(): NodeView[] {
    return [...this.views.values()];
  }

  get(nodeId: string): NodeView | undefined {
    return this.views.get(nodeId);
  }
}
