import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { EventEnvelope } from "../event-envelope.ts";
import { NodeIndex } from "../node-index/node-index.ts";
import type { NodeView } from "../node-view.ts";
import { NodeViews } from "../node-views.ts";
import type { FoldedModel } from "./as-of-folds.ts";

/** View changes handed to the index per updateMany: a fold from the start indexes 100,000 nodes, tens of ms a slice. */
const INDEX_SLICE = 8_192;

/**
 * The node list's read model as the node module builds it (NodeViews feeding a NodeIndex), with nothing live beside
 * it: no node reports capacity into this index, and no liveness tracker stands behind its views. A held fold's view
 * changes reach the index together at its release (NodeIndex.updateMany): a fold on of thousands of events moves each
 * of the index's ordered sets once, not a seek and a move per event.
 */
export class NodeReadModel implements FoldedModel {
  readonly index = new NodeIndex();
  /** While releasing: the views' changes, for the index at the end. */
  private releasing: [string, NodeView][] | undefined;
  readonly views = new NodeViews((id, _before, after) => {
    if (this.releasing) this.releasing.push([id, after]);
    else this.index.update(id, after);
  });

  handle(envelope: EventEnvelope): void {
    this.views.handleEnvelope(envelope);
  }

  hold(): void {
    this.views.hold();
  }

  async release(): Promise<void> {
    const changes: [string, NodeView][] = [];
    this.releasing = changes;
    try {
      await this.views.release();
    } finally {
      this.releasing = undefined;
    }
    for (let at = 0; at < changes.length; at += INDEX_SLICE) {
      if (at > 0) await yieldToEventLoop();
      this.index.updateMany(changes.slice(at, at + INDEX_SLICE));
    }
  }
}
