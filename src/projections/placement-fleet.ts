import { candidateNodeOf } from "../scheduler/candidate-node.ts";
import { FleetIndex } from "../scheduler/fleet/fleet-index.ts";
import type { FleetView } from "../scheduler/fleet/fleet-view.ts";
import type { NodeView } from "./node-view.ts";
import type { NodeViews } from "./node-views.ts";

/**
 * The fleet placement reads (FleetIndex), following the node read model: told of each view change by NodeViews'
 * listener, so each node is made a candidate and indexed once per change, not at every placement. A deleted node is in
 * the read model (its history stays) but gone from the cluster: gone from the fleet too.
 */
export class PlacementFleet {
  private readonly index = new FleetIndex();

  /** A node's view changed (NodeViews' listener). */
  changed(view: NodeView): void {
    this.index.update(view.nodeId, view.deleted ? undefined : candidateNodeOf(view));
  }

  /**
   * The fleet as these views hold it now. While they are held (a start-up's catch-up) their listener hears nothing: the
   * fleet is brought up to date from them here, which changes only what changed.
   */
  view(views: NodeViews): FleetView {
    if (views.holding) for (const view of views.all()) this.changed(view);
    return this.index.view();
  }
}
