import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { evolveNode } from "../../machines/node/evolve-node.ts";
import { initialNodeState, type NodeState } from "../../machines/node/node-state.ts";
import { nodeEvents } from "../events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../events/catalog/node-events.ts";
import type { RecordedEvent } from "../events/store/event-store.ts";
import { EventEnvelope } from "./event-envelope.ts";
import { entityIdOf, nodeStream } from "../events/streams.ts";
import { nodeViewOf, type NodeView } from "./node-view.ts";
import { SharedNodeParts, flatString } from "./shared-node-parts.ts";

const RELEASE_SLICE = 4_096;
/** A held node with no view yet and nothing folded that makes one. */
const NO_STATE = initialNodeState("");

/** A node's state folded while held, not yet made a view; `nodeId` is the view's own string. */
interface Folding {
  readonly nodeId: string;
  state: NodeState;
  revision: number;
}

/**
 * What start-up recovery takes from the read model (NodeManager.adoptRecovered): every node's folded state, and the
 * keys revoked in the events folded.
 */
export interface RecoveredNodeStates {
  /** Every view (deleted nodes too), and the state of every node folded that never registered (pre-authorised). */
  readonly states: readonly NodeState[];
  /**
   * Every key a NodeCredentialRevoked named in the events folded. Not those a snapshot covers: a snapshot holds views,
   * and a deleted node's state no longer holds its key.
   */
  readonly revokedKeys: ReadonlySet<string>;
}

/** Told of every view change, after it is applied (an index of the views, say). */
export type NodeViewListener = (nodeId: string, before: NodeView | undefined, after: NodeView) => void;

/**
 * All node views, folded in store order with the node decider's evolve. Views are immutable and
 * share what nodes have alike: one id string per node (the view's, a flat copy, which the index
 * keys by too) and the equal parts of their NodeInfo (SharedNodeParts).
 */
export class NodeViews {
  private readonly views = new Map<string, NodeView>();
  private readonly parts = new SharedNodeParts();
  /**
   * While held: the view as it was when the hold began (undefined: none) of each node whose view was set since, and
   * of no other. Holding and releasing then cost what the held fold changed, not the number of nodes.
   */
  private heldFrom: Map<string, NodeView | undefined> | undefined;
  /**
   * While held: the states folded since the hold began, by stream name as read (one look-up per
   * event), made views only when asked for or on release. A catch-up then builds one view and
   * shares one info's parts per node, not per event (an info superseded later in the same
   * catch-up is never shared, and never indexed).
   */
  private readonly folding = new Map<string, Folding>();
  /**
   * The states of nodes folded that have no view (never registered: pre-authorised, or a pre-authorisation
   * withdrawn), by node id: the next event of such a node folds on from it, and recovery needs them.
   */
  private readonly unviewed = new Map<string, NodeState>();
  /** Every key a NodeCredentialRevoked named, until recovered() hands them over (nothing reads them after). */
  private revokedKeys: Set<string> | undefined = new Set();
  private folded = 0;

  constructor(private readonly listener?: NodeViewListener) {}

  /**
   * From now until release(), the listener is not told of each change; release() tells it once
   * per node whose view changed meanwhile, with the latest view. A catch-up over many events per
   * node (a start without a snapshot) then updates the index once per node, not once per event.
   */
  hold(): void {
    this.heldFrom ??= new Map();
  }

  /**
   * Yields to the event loop every few thousand nodes: building the index of 100,000 takes
   * seconds on a loaded machine. Changes meanwhile reach the listener at once (and again here,
   * with the same latest view: no harm).
   */
  async release(): Promise<void> {
    const from = this.heldFrom;
    if (!from) return;
    let made = 0;
    for (const node of this.folding.values()) {
      this.materialize(node);
      if (++made % RELEASE_SLICE === 0) await yieldToEventLoop();
    }
    this.folding.clear();
    this.heldFrom = undefined;
    if (!this.listener) return;
    // In id order: the node index's ordered sets then mostly append (at a start no node has
    // reported capacity, so every order but the id's has one key per partition).
    const ids = [...from.keys()].sort();
    for (let i = 0; i < ids.length; i++) {
      if (i > 0 && i % RELEASE_SLICE === 0) await yieldToEventLoop();
      const nodeId = ids[i] as string;
      const view = this.views.get(nodeId) as NodeView;
      const before = from.get(nodeId);
      if (view !== before) this.listener(nodeId, before, view);
    }
  }

  /** How many node events these views have folded (snapshot's not counted). */
  get eventsFolded(): number {
    return this.folded;
  }

  /** Between hold() and the end of release(): the listener is not told of changes as they happen. */
  get holding(): boolean {
    return this.heldFrom !== undefined;
  }

  private changed(nodeId: string, before: NodeView | undefined, after: NodeView): void {
    if (!this.heldFrom) this.listener?.(nodeId, before, after);
  }

  /** A stored event outside the processor host (tests, seeding): the same path as an envelope's. */
  handle = (recorded: RecordedEvent): void => this.handleEnvelope(new EventEnvelope(recorded));

  /** An event the processor host has already decoded (once, for every processor). */
  handleEnvelope = (envelope: EventEnvelope): void => {
    const event = envelope.of(nodeEvents);
    if (event === undefined) return;
    this.folded++;
    if (this.revokedKeys && event.type === "NodeCredentialRevoked") this.revokedKeys.add(event.data.PublicKey);
    this.apply(envelope.recorded, event);
  };

  private apply(recorded: RecordedEvent, event: NodeEvent): void {
    if (this.heldFrom) return this.fold(recorded, event);
    const streamId = entityIdOf(recorded.stream);
    const before = this.views.get(streamId);
    const unviewed = before === undefined && this.unviewed.size > 0 ? this.unviewed.get(streamId) : undefined;
    // A new node's id is a flat copy: the stream name's slice would keep the whole name alive.
    const nodeId = before?.nodeId ?? unviewed?.nodeId ?? flatString(streamId);
    const state = evolveNode(before ?? unviewed ?? initialNodeState(nodeId), event, recorded.time);
    const next = this.viewOf(state, recorded.revision, before);
    if (!next) {
      this.unviewed.set(nodeId, state);
      return;
    }
    if (unviewed) this.unviewed.delete(nodeId);
    this.setView(nodeId, next);
    this.changed(nodeId, before, next);
  }

  /** While held: evolve only; the view is made later (materialize), once per node. */
  private fold(recorded: RecordedEvent, event: NodeEvent): void {
    let node = this.folding.get(recorded.stream);
    if (node === undefined) {
      const streamId = entityIdOf(recorded.stream);
      const before = this.views.get(streamId);
      const unviewed = before === undefined && this.unviewed.size > 0 ? this.unviewed.get(streamId) : undefined;
      node = {
        nodeId: before?.nodeId ?? unviewed?.nodeId ?? flatString(streamId),
        state: before ?? unviewed ?? NO_STATE,
        revision: before?.revision ?? -1,
      };
      this.folding.set(recorded.stream, node);
    }
    node.state = evolveNode(node.state === NO_STATE ? initialNodeState(node.nodeId) : node.state, event, recorded.time);
    node.revision = recorded.revision;
  }

  /** A held node's folded state made its view, as apply would have left it. */
  private materialize(node: Folding): void {
    if (node.state === NO_STATE) return;
    const before = this.views.get(node.nodeId);
    // Nothing folded since the view was made. An event evolve ignores still moves the revision (the ETag), as in apply.
    if (node.state === before && node.revision === before.revision) return;
    const next = this.viewOf(node.state, node.revision, before);
    if (next === undefined) {
      // Never registered (as apply: kept aside, no view).
      this.unviewed.set(node.nodeId, node.state);
      return;
    }
    this.setView(node.nodeId, next);
    if (this.unviewed.size > 0) this.unviewed.delete(node.nodeId);
  }

  /** Makes the views of every node folded while held (the views are then current; the hold goes on). */
  private materializeAll(): void {
    for (const node of this.folding.values()) this.materialize(node);
    this.folding.clear();
  }

  /** While held, the first change of a node since the hold began keeps the view it had then (release compares). */
  private setView(nodeId: string, view: NodeView): void {
    const from = this.heldFrom;
    if (from !== undefined && !from.has(nodeId)) from.set(nodeId, this.views.get(nodeId));
    this.views.set(nodeId, view);
  }

  /**
   * The view of `state`, with the info's shared parts (looked up again only when the info changed), and `nodeId` (the
   * view's own string) for the state's.
   */
  private viewOf(
    state: NodeState,
    revision: number,
    before: NodeView | undefined,
    nodeId: string = state.nodeId,
  ): NodeView | undefined {
    const info =
      state.info === undefined || state.info === before?.info ? state.info : this.parts.info(state.info, nodeId);
    return nodeViewOf(state, revision, info, nodeId);
  }

  /** Starts from a snapshot's views (before any event is handled); the listener is told of each. */
  seed(views: readonly NodeView[]): void {
    this.materializeAll();
    for (const decoded of views) {
      const nodeId = flatString(decoded.nodeId);
      const view = this.viewOf(decoded, decoded.revision, undefined, nodeId) ?? decoded;
      const before = this.views.get(nodeId);
      this.setView(nodeId, view);
      this.changed(nodeId, before, view);
    }
  }

  /**
   * What start-up recovery adopts, once the views have caught up with the store (NodeManager.adoptRecovered). Taken
   * once: revoked keys are not collected after (the node manager follows each revocation itself from then on).
   */
  recovered(): RecoveredNodeStates {
    this.materializeAll();
    const revokedKeys = this.revokedKeys ?? new Set<string>();
    this.revokedKeys = undefined;
    return { states: [...this.views.values(), ...this.unviewed.values()], revokedKeys };
  }

  /** Every view now, deleted ones included: what a node-state snapshot holds. */
  all(): NodeView[] {
    this.materializeAll();
    return [...this.views.values()];
  }

  get(nodeId: string): NodeView | undefined {
    const node = this.folding.size === 0 ? undefined : this.folding.get(nodeStream(nodeId));
    if (node) {
      this.materialize(node);
      this.folding.delete(nodeStream(nodeId));
    }
    return this.views.get(nodeId);
  }
}
