import type { LabelSelector } from "../../labels/label-selector.ts";

type Labels = Readonly<Record<string, string>>;

interface KeyPostings {
  /**
   * Nodes with this label key, by value. Nodes with the key, whatever its value, are their union
   * (a node has one value per key): not kept as a set of its own, which would cost as much again.
   */
  readonly byValue: Map<string, Set<string>>;
  /** How many nodes have this key: the union's size. */
  size: number;
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
        postings = { byValue: new Map(), size: 0 };
        this.byKey.set(key, postings);
      }
      let nodes = postings.byValue.get(value);
      if (!nodes) {
        nodes = new Set();
        postings.byValue.set(value, nodes);
      }
      if (nodes.has(nodeId)) continue;
      nodes.add(nodeId);
      postings.size++;
    }
  }

  remove(nodeId: string, labels: Labels): void {
    for (const [key, value] of Object.entries(labels)) {
      const postings = this.byKey.get(key);
      if (!postings) continue;
      const nodes = postings.byValue.get(value);
      if (!nodes?.delete(nodeId)) continue;
      postings.size--;
      if (nodes.size === 0) postings.byValue.delete(value);
      if (postings.size === 0) this.byKey.delete(key);
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
      if (r.op === "exists") set = postings ? { size: postings.size, ids: () => concat([...postings.byValue.values()]) } : EMPTY;
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
