import type { Requirement } from "../../labels/label-selector.ts";
import type { CapacityLedger } from "../capacity-ledger.ts";
import type { CapacityWeights } from "../node-verdicts.ts";
import type { CandidateNode } from "../placement-request.ts";
import type { FreestFirst } from "./freest-first.ts";
import type { Leading } from "./peak-free.ts";

/** What placement asks of the fleet's index (FleetIndex), valid while the fleet has not changed. */
export interface FleetLookup {
  /** Bumped by every change of the fleet. */
  readonly version: number;
  /**
   * The nodes that may be suitable for a job on this engine (lower case) with these required constraints: every one
   * that is, and no more than the smallest of the index's sets the job's terms name (nodes that pass the gate, are
   * neither cordoned nor withheld and run the engine; those with a label value the job asks for).
   */
  candidates(engine: string, required: readonly Requirement[]): CandidateNode[];
  /** `candidates`, each weighed by its free capacity against this ledger, to be taken freest first. */
  freestCandidates(
    engine: string,
    required: readonly Requirement[],
    weights: CapacityWeights,
    ledger: CapacityLedger,
  ): FreestFirst;
  /** How many nodes `candidates` would give. */
  candidateCount(engine: string, required: readonly Requirement[]): number;
  /** How many nodes are available (past the gate). */
  readonly availableCount: number;
  /** The highest weighted free capacity among every available node against this ledger (judge's maxFree). */
  peakFree(weights: CapacityWeights, ledger: CapacityLedger): number;
  /**
   * The available nodes with the most weighted free capacity against this ledger, best first, at most `limit`, and the
   * most any other available node has (−1: none is left); undefined when the index cannot say.
   */
  leading(weights: CapacityWeights, ledger: CapacityLedger, limit: number): Leading | undefined;
  /** Whether the available nodes fall in fewer than `most` classes of equal free capacity against this ledger. */
  fewerClassesThan(ledger: CapacityLedger, most: number): boolean;
  /**
   * The nodes `candidates` gives, one at a time, in judge's order for a job whose nodes' ranks differ by free capacity
   * alone: capacity rank against `peak` highest first, equal ranks by id. Undefined when the index cannot say.
   */
  rankOrder(
    engine: string,
    required: readonly Requirement[],
    weights: CapacityWeights,
    ledger: CapacityLedger,
    peak: number,
    budget: number,
  ): NextInRank | undefined;
}

/** The next node in rank order; undefined when none is left, null once `budget` nodes were passed (it gives up). */
export type NextInRank = () => CandidateNode | undefined | null;

/**
 * The fleet as one placement sees it: every candidate node as it was when the view was taken (FleetIndex.view()), and
 * the index to find the few a job can take while the fleet is still as it was. Immutable: the index copies what a view
 * shares before it changes it.
 */
export class FleetView {
  private dense: readonly CandidateNode[] | undefined;

  /** @internal Made by FleetIndex.view(). */
  constructor(
    private readonly lookup: FleetLookup,
    /** The index's version when the view was taken. */
    readonly version: number,
    private readonly slots: readonly (CandidateNode | undefined)[],
    /** How many nodes. */
    readonly size: number,
    /** How many nodes have numbers placement refuses (placementRequestProblem names them). */
    readonly problems: number,
  ) {}

  /** Every node, in the order the index first saw them; made on the first call, then kept. */
  list(): readonly CandidateNode[] {
    if (this.dense !== undefined) return this.dense;
    const out: CandidateNode[] = [];
    for (const node of this.slots) if (node !== undefined) out.push(node);
    return (this.dense = out);
  }

  /** The index, while the fleet is as this view has it; undefined once it has changed. */
  indexed(): FleetLookup | undefined {
    return this.lookup.version === this.version ? this.lookup : undefined;
  }
}

/** A request's nodes as a list, whether given as one or as a fleet. */
export function listOf(nodes: readonly CandidateNode[] | FleetView): readonly CandidateNode[] {
  return nodes instanceof FleetView ? nodes.list() : nodes;
}
