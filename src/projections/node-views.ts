import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { evolveNode } from "../../machines/node/evolve-node.ts";
import { initialNodeState, type NodeState } from "../../machines/node/node-state.ts";
import { decodeNodeEvent } from "../events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../events/catalog/node-events.ts";
import type { RecordedEvent } from "../events/store/event-store.ts";
import type { EventEnvelope } from "./event-envelope.ts";
import { NODE_CATEGORY, categoryOf, entityIdOf } from "../events/streams.ts";
import { nodeViewOf, type NodeView } from "./node-view.ts";

const RELEASE_SLICE = 4_096;

/** Told of every view change, after it is applied (an index of the views, say). */
export type NodeViewListener = (nodeId: string, before: NodeView | undefined, after: NodeView) => void;

/** All node views, folded in store order with the node decider's evolve. */
export class NodeViews {
  private readonly views = new Map<string, NodeView>();
  /** While held: every view as it was when the hold began. */
  private heldFrom: Map<string, NodeView> | undefined;

  constructor(private readonly listener?: NodeViewListener) {}

  /**
   * From now until release(), the listener is not told of each change; release() tells it once
   * per node whose view changed meanwhile, with the latest view. A catch-up over many events per
   * node (a start without a snapshot) then updates the index once per node, not once per event.
   */
  hold(): void {
    this.heldFrom ??= new Map(this.views);
  }

  /**
   * Yields to the event loop every few thousand nodes: building the index of 100,000 takes
   * seconds on a loaded machine. Changes meanwhile reach the listener at once (and again here,
   * with the same latest view: no harm).
   */
  async release(): Promise<void> {
    const from = this.heldFrom;
    this.heldFrom = undefined;
    if (!from || !this.listener) return;
    // In id order: the node index's ordered sets then mostly append (at a start no node has
    // reported capacity, so every order but the id's has one key per partition).
    const ids = [...this.views.keys()].sort();
    for (let i = 0; i < ids.length; i++) {
      if (i > 0 && i % RELEASE_SLICE === 0) await yieldToEventLoop();
      const nodeId = ids[i] as string;
      const view = this.views.get(nodeId) as NodeView;
      const before = from.get(nodeId);
      if (view !== before) this.listener(nodeId, before, view);
    }
  }

  private changed(nodeId: string, before: NodeView | undefined, after: NodeView): void {
    if (!this.heldFrom) this.listener?.(nodeId, before, after);
  }

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
    let next: NodeView | undefined;
    if (before !== undefined && state !== before) {
      // evolveNode made a new state from the view, a copy of all its fields that no one else
      // holds yet: only its revision is stale. One object per event instead of two.
      const copy = state as NodeState & { revision: number };
      copy.revision = recorded.revision;
      next = copy as NodeView;
    } else next = nodeViewOf(state, recorded.revision);
    if (!next) return;
    this.views.set(nodeId, next);
    this.changed(nodeId, before, next);
  }

  /** Starts from a snapshot's views (before any event is handled); the listener is told of each. */
  seed(views: readonly NodeView[]): void {
    for (const view of views) {
      const before = this.views.get(view.nodeId);
      this.views.set(view.nodeId, view);
      this.changed(view.nodeId, before, view);
    }
  }

  /**
   * Takes the states another fold of the same events reached (NodeManager.recover()): the view of
   * each node in `revisions`, at that revision. Nodes absent from it keep their view.
   */
  seedStates(states: ReadonlyMap<string, NodeState>, revisions: ReadonlyMap<string, number>): void {
    for (const [nodeId, revision] of revisions) {
      const state = states.get(nodeId);
      const view = state && nodeViewOf(state, revision);
      if (!view) continue;
      const before = this.views.get(nodeId);
      this.views.set(nodeId, view);
      this.changed(nodeId, before, view);
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
