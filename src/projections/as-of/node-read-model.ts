import type { EventEnvelope } from "../event-envelope.ts";
import { NodeIndex } from "../node-index/node-index.ts";
import { NodeViews } from "../node-views.ts";
import type { FoldedModel } from "./as-of-folds.ts";

/**
 * The node list's read model as the node module builds it (NodeViews feeding a NodeIndex, one change at a time), with
 * nothing live beside it: no node reports capacity into this index, and no liveness tracker stands behind its views.
 */
export class NodeReadModel implements FoldedModel {
  readonly index = new NodeIndex();
  readonly views = new NodeViews((id, _before, after) => this.index.update(id, after));

  handle(envelope: EventEnvelope): void {
    this.views.handleEnvelope(envelope);
  }

  hold(): void {
    this.views.hold();
  }

  release(): Promise<void> {
    return this.views.release();
  }
}
