import { decodeNodeEvent } from "../events/catalog/node-event-codec.ts";
import type { RecordedEvent } from "../events/store/event-store.ts";
import { NODE_CATEGORY, categoryOf, entityIdOf } from "../events/streams.ts";
import { evolveNodeView, type NodeView } from "./node-view.ts";

/** All node views, fed in store order by a ProjectionRunner. */
export class NodeViews {
  private readonly views = new Map<string, NodeView>();

  handle = (recorded: RecordedEvent): void => {
    if (categoryOf(recorded.stream) !== NODE_CATEGORY) return;
    const nodeId = entityIdOf(recorded.stream);
    const next = evolveNodeView(this.views.get(nodeId), decodeNodeEvent(recorded), { revision: recorded.revision, time: recorded.time });
    if (next) this.views.set(nodeId, next);
  };

  get(nodeId: string): NodeView | undefined {
    return this.views.get(nodeId);
  }

  /** Nodes currently in the cluster (deleted ones excluded). */
  current(): NodeView[] {
    return [...this.views.values()].filter((v) => !v.deleted);
  }

  /** Every node id ever seen, for history look-ups of deleted nodes. */
  allIds(): string[] {
    return [...this.views.keys()];
  }
}
