import type { LabelSelector } from "../../labels/label-selector.ts";

type Labels = Readonly<Record<string, string>>;

interface KeyPostings {
  /** Nodes with this label key, whatever its value. */
  readonly all: Set<string>;
  readonly byValue: Map<string, Set<string>>;
}

/** Nodes a positive selector term can match: its size is known before any node is looked at. */
export interface CandidateSet {
  readonly size: number;
  ids(): Iterable<string>;
}

/** An inverted index of the current nodes' labels: key → value → node ids. */
export class LabelIndex {
  private readonly byKey = new Map<string, KeyPostings>();

  add(nodeId: string, labels: Labels): void {
    for (const [key, value] of Object.entries(labels)) {
      let postings = this.byKey.get(key);
      if (!postings) {
        postings = { all: new Set(), byValue: new Map() };
        this.byKey.set(key, postings);
      }
      postings.all.add(nodeId);
      let nodes = postings.byValue.get(value);
      if (!nodes) {
        nodes = new Set();
        postings.byValue.set(value, nodes);
      }
      nodes.add(nodeId);
    }
  }

  remove(nodeId: string, labels: Labels): void {
    for (const [key, value] of Object.entries(labels)) {
      const postings = this.byKey.get(key);
      if (!postings) continue;
      postings.all.delete(nodeId);
      const nodes = postings.byValue.get(value);
      nodes?.delete(nodeId);
      if (nodes?.size === 0) postings.byValue.delete(value);
      if (postings.all.size === 0) this.byKey.delete(key);
    }
  }

  replace(nodeId: string, before: Labels, after: Labels): void {
    this.remove(nodeId, before);
    this.add(nodeId, after);
  }

  /**
   * The smallest set of nodes that holds every match of the selector, taken from its positive
   * terms (`k in (…)` and `k=v`: the union of the values' postings; `k`: every node with the
   * key); undefined when it has none (only `!k`, `notin`, `!=`). Every match is in it, but not
   * every member matches: callers still apply the whole selector.
   */
  smallestCandidateSet(selector: LabelSelector): CandidateSet | undefined {
    let best: CandidateSet | undefined;
    for (const r of selector.requirements) {
      let set: CandidateSet | undefined;
      const postings = this.byKey.get(r.key);
      if (r.op === "exists") set = postings ? { size: postings.all.size, ids: () => postings.all } : EMPTY;
      else if (r.op === "in") {
        // Distinct values: a node has one value per key, so their postings are disjoint.
        const lists = [...new Set(r.values)].map((v) => postings?.byValue.get(v)).filter((s): s is Set<string> => s !== undefined);
        set = { size: lists.reduce((n, s) => n + s.size, 0), ids: () => concat(lists) };
      }
      if (set !== undefined && (best === undefined || set.size < best.size)) best = set;
      if (best?.size === 0) return best;
    }
    return best;
  }
}

const EMPTY: CandidateSet = { size: 0, ids: () => [] };

function* concat(lists: readonly Set<string>[]): Iterable<string> {
  for (const list of lists) yield* list;
}
