import type { CapacityLedger } from "../capacity-ledger.ts";
import type { JobSelectors } from "../job-constraints.ts";
import { capacityWeights, judgeList, type Judgement } from "../node-verdicts.ts";
import type { CandidateNode, PlacementRequest } from "../placement-request.ts";
import type { FleetView, NextInRank } from "./fleet-view.ts";
import type { FreestFirst } from "./freest-first.ts";
import type { Leading } from "./peak-free.ts";

/** The freest nodes a walk judges first; each further step four times as many. */
const FIRST_WALK = 64;
/** After a first batch of `limit`, a rank-order read judges at least this many at a time. */
const FEW_BATCH = 16;
/** A walk that has not found its nodes among this many judges the job's whole candidate set instead. */
const MAX_WALK = 1024;
/**
 * Below this many classes of equal free capacity, the nodes are read in rank order (classes weighed, ties by id) before
 * the freest are walked: weighing the classes costs less than judging the walk's first nodes. With more, the walk
 * goes first and rank order is read only where it cannot conclude.
 */
const FEW_CLASSES = 256;

/**
 * judge() over a fleet: the nodes the index says may be suitable are judged, ranked against the whole fleet's freest
 * node, and they are every suitable node, so `ranked` is what judging the whole fleet would give. What counts every
 * node (available, suitable, someBusy, the verdicts of a shortfall's message and of `PlacementResult.nodes`) judges
 * the whole fleet, once, when first read: a job that finds its nodes never reads it.
 *
 * When the job's nodes' ranks differ only by free capacity (no execution of it anywhere, no favour_ constraint), its
 * freest nodes are judged first: once the last of the best `limit` among them ranks above anything the rest could
 * reach, the rest cannot change the answer. A job the index cannot narrow (no constraint, or only negations) takes
 * them from the whole fleet's freest (PeakFree's leaders); a narrowed one weighs its candidates (numbers read, no
 * judging) and takes its own freest.
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
  const weights = capacityWeights(request.resources);
  const peak = lookup.peakFree(weights, ledger);
  const engine = request.engine.toLowerCase();
  const required = selectors.required.requirements;
  let found: Judgement | undefined;
  const candidates = (): Judgement =>
    (found ??= judgeList(request, lookup.candidates(engine, required), selectors, ledger, peak));
  const count = lookup.candidateCount(engine, required);
  // When the index leaves most of the fleet, the fleet's freest nodes are walked; else the job's own, weighed first.
  const broad = 2 * count > lookup.availableCount;
  let freest: FreestFirst | undefined;
  const own = (size: number) => (freest ??= lookup.freestCandidates(engine, required, weights, ledger)).take(size);
  // The fleet's leaders may run out before the walk ends: the job's own candidates, weighed, take over.
  const lead = broad ? (size: number) => lookup.leading(weights, ledger, size) ?? own(size) : own;
  const byCapacityAlone =
    count > FIRST_WALK && request.executions.length === 0 && selectors.favoured.requirements.length === 0 && peak > 0;
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
    ranked: (limit = Infinity) => {
      if (!byCapacityAlone || !Number.isFinite(limit)) return candidates().ranked(limit);
      const inOrder = () => {
        const next = lookup.rankOrder(engine, required, weights, ledger, peak, MAX_WALK);
        return next === undefined ? undefined : inRankOrder(request, next, selectors, ledger, peak, limit);
      };
      const walkOver = (from: number, to: number) => walk(request, lead, selectors, ledger, peak, limit, from, to);
      const first = Math.max(FIRST_WALK, 4 * limit);
      // Many nodes alike tie at the walk's boundary, where it cannot conclude: in rank order, ties are read by id. A
      // job the index cannot narrow reads it first; a narrowed one's own freest settle most placements in one step.
      let fewClasses: boolean | undefined;
      const few = () => (fewClasses ??= lookup.fewerClassesThan(ledger, FEW_CLASSES));
      if (broad && few()) return inOrder() ?? walkOver(first, MAX_WALK) ?? candidates().ranked(limit);
      return (
        walkOver(first, first) ??
        (few() ? inOrder() : undefined) ??
        walkOver(4 * first, MAX_WALK) ??
        (few() ? undefined : inOrder()) ??
        candidates().ranked(limit)
      );
    },
    verdicts: () => all().verdicts(),
  };
}

/**
 * The best `limit` suitable nodes found among the freest (the first `from`, then four times as many each step up to
 * `to`), or undefined when the walk cannot tell.
 */
function walk(
  request: PlacementRequest,
  freestFirst: (size: number) => Leading | undefined,
  selectors: JobSelectors,
  ledger: CapacityLedger,
  peak: number,
  limit: number,
  from: number,
  to: number,
): string[] | undefined {
  // judge's capacity rank; every other part of a rank is the same for every node here.
  const capacityRank = (w: number) => Math.floor((w / peak) * 100);
  for (let size = from; size <= to; size *= 4) {
    const lead = freestFirst(size);
    if (lead === undefined) return undefined;
    const best = judgeList(request, lead.nodes, selectors, ledger, peak).ranked(limit);
    if (lead.rest < 0) return best;
    if (best.length < limit) continue;
    const last = best[limit - 1] as string;
    const at = lead.nodes.findIndex((n) => n.id === last);
    if (capacityRank(lead.values[at] as number) > capacityRank(lead.rest)) return best;
  }
  return undefined;
}

/**
 * The best `limit` suitable nodes, judged in batches in rank order (judge's, as ranks differ by free capacity alone):
 * the first `limit` suitable ones met are the answer. Undefined when the order gives up.
 */
function inRankOrder(
  request: PlacementRequest,
  next: NextInRank,
  selectors: JobSelectors,
  ledger: CapacityLedger,
  peak: number,
  limit: number,
): string[] | undefined {
  const best: string[] = [];
  for (let size = limit; ; size = Math.max(FEW_BATCH, 4 * size)) {
    const batch: CandidateNode[] = [];
    let node: CandidateNode | undefined | null;
    while (batch.length < size && (node = next()) != null) batch.push(node);
    if (node === null) return undefined;
    // Within a batch judge orders the suitable by rank, then id: the order they came in.
    for (const id of judgeList(request, batch, selectors, ledger, peak).ranked(limit - best.length)) best.push(id);
    if (best.length >= limit || batch.length < size) return best;
  }
}
