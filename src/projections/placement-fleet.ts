import { candidateNodeOf } from "../scheduler/candidate-node.ts";
import { FleetIndex } from "../scheduler/fleet/fleet-index.ts";
import type { FleetView } from "../scheduler/fleet/fleet-view.ts";
import type { NodeView } from "./node-view.ts";
import type { NodeViews } from "./node-views.ts";

/**
 * The fleet placement reads (FleetIndex), following the node read model: told of each view change by NodeViews'
 * listener, so each node is made a candidate and indexed once per change, not at every placement. A deleted node is in
 * the read model (its history stays) but gone from the cluster: gone from the fleet too.
 *
 * Built when placement first asks for it, from the views as they are then: a start makes every node a view, and the
 * node list is served without waiting for placement's index of them (a start with no work to place never builds it).
 */
export class PlacementFleet {
  private readonly index = new FleetIndex();
  private built = false;

  /** A node's view changed (NodeViews' listener). */
  changed(view: NodeView): void {
    if (this.built) this.indexed(view);
  }

  /**
   * The fleet as these views hold it now. The first time, and while they are held (a start-up's catch-up: their
   * listener hears nothing), it is brought up to date from them here, which changes only what changed.
   */
  view(views: NodeViews): FleetView {
    if (!this.built || views.holding) for (const view of views.all()) this.indexed(view);
    this.built = true;
    return this.index.view();
  }

  private indexed(view: NodeView): void {
    this.index.update(view.nodeId, view.deleted ? undefined : candidateNodeOf(view));
  }
}
