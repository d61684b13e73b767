import type { CapacityLedger } from "../capacity-ledger.ts";
import type { JobSelectors } from "../job-constraints.ts";
import { capacityWeights, judgeList, type Judgement } from "../node-verdicts.ts";
import type { PlacementRequest } from "../placement-request.ts";
import type { FleetView } from "./fleet-view.ts";

/**
 * judge() over a fleet: the nodes the index says may be suitable are judged, ranked against the whole fleet's freest
 * node, and they are every suitable node, so `ranked` is what judging the whole fleet would give. What counts every
 * node (available, suitable, someBusy, the verdicts of a shortfall's message and of `PlacementResult.nodes`) judges
 * the whole fleet, once, when first read: a job that finds its nodes never reads it.
 */
export function judgeFleet(
  request: PlacementRequest,
  fleet: FleetView,
  selectors: JobSelectors,
  ledger: CapacityLedger,
): Judgement {
  let whole: Judgement | undefined;
  const all = (): Judgement => (whole ??= judgeList(request, fleet.list(), selectors, ledger));
  const lookup = fleet.indexed();
  // The fleet changed since the view was taken: the index no longer says what the view holds.
  if (lookup === undefined) return all();
  const within = lookup.candidates(request.engine.toLowerCase(), selectors.required.requirements);
  const peak = lookup.peakFree(capacityWeights(request.resources), ledger);
  const found = judgeList(request, within, selectors, ledger, peak);
  return {
    get available() {
      return all().available;
    },
    get suitable() {
      return all().suitable;
    },
    get someBusy() {
      return all().someBusy;
    },
    ranked: (limit) => found.ranked(limit),
    verdicts: () => all().verdicts(),
  };
}
