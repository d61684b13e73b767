import { matchesRequirement, type LabelSelector, type Requirement } from "../../labels/label-selector.ts";

type Labels = Readonly<Record<string, string>>;

/**
 * The slots of one label's nodes: a set, and beside it a bitmap over the slot space once the
 * set holds at least one slot in BITMAP_SHARE of that space. A bitmap costs one bit per slot, so
 * it costs at most 2 B per member (4 B just before it is dropped) beside the set's ≈ 20 B; it
 * answers "is this slot in?" with one load, and its complement ("which nodes lack this label?")
 * with a scan of the space's words instead of a walk of every node. A label on fewer nodes has
 * no bitmap: its complement is most of the fleet, never the cheapest way in.
 */
class Posting {
  readonly slots = new Set<number>();
  bits: Uint32Array | undefined;
}

interface KeyPostings {
  /**
   * Nodes with this label key, by value. Nodes with the key, whatever its value, are their union
   * (a node has one value per key): not kept as a set of its own, which would cost as much again;
   * only its bitmap is kept, once the key is common enough.
   */
  readonly byValue: Map<string, Posting>;
  /** How many nodes have this key: the union's size. */
  size: number;
  bits: Uint32Array | undefined;
}

/** A posting list gets a bitmap once it holds this share of the slot space (and at least BITMAP_MIN slots). */
const BITMAP_SHARE = 16;
const BITMAP_MIN = 256;

/**
 * Nodes (slots) a selector term can match: a superset of its matches whose size is known before
 * any node is looked at. Callers still apply the whole selector to each.
 */
export interface CandidateSet {
  readonly size: number;
  forEach(visit: (slot: number) => void): void;
}

/** A selector compiled against the index: does the node in `slot`, with these labels, match? */
export type SlotMatcher = (slot: number, labels: Labels) => boolean;

/** An inverted index of the current nodes' labels over their slots: key → value → slots. */
export class LabelIndex {
  private readonly byKey = new Map<string, KeyPostings>();
  /** Every slot in use: what a complement is taken from. */
  private all = new Uint32Array(32);
  private count = 0;
  private readonly bitmapMin: number;

  /** `bitmapMin`: the fewest members a posting list needs for a bitmap (tests: 1 for all, Infinity for none). */
  constructor(options: { readonly bitmapMin?: number } = {}) {
    this.bitmapMin = options.bitmapMin ?? BITMAP_MIN;
  }

  /** Nodes indexed. */
  get size(): number {
    return this.count;
  }

  add(slot: number, labels: Labels): void {
    this.grow(slot);
    if (!testBit(this.all, slot)) {
      setBit(this.all, slot);
      this.count++;
    }
    this.addLabels(slot, labels);
  }

  remove(slot: number, labels: Labels): void {
    this.removeLabels(slot, labels);
    if (testBit(this.all, slot)) {
      clearBit(this.all, slot);
      this.count--;
    }
  }

  replace(slot: number, before: Labels, after: Labels): void {
    this.removeLabels(slot, before);
    this.addLabels(slot, after);
  }

  private addLabels(slot: number, labels: Labels): void {
    for (const key in labels) {
      if (!Object.prototype.hasOwnProperty.call(labels, key)) continue;
      const value = labels[key] as string;
      let postings = this.byKey.get(key);
      if (!postings) {
        postings = { byValue: new Map(), size: 0, bits: undefined };
        this.byKey.set(key, postings);
      }
      let posting = postings.byValue.get(value);
      if (!posting) {
        posting = new Posting();
        postings.byValue.set(value, posting);
      }
      if (posting.slots.has(slot)) continue;
      posting.slots.add(slot);
      postings.size++;
      if (posting.bits) setBit(posting.bits, slot);
      else if (this.wantsBitmap(posting.slots.size)) posting.bits = this.bitmapOf([posting]);
      if (postings.bits) setBit(postings.bits, slot);
      else if (this.wantsBitmap(postings.size)) postings.bits = this.bitmapOf(postings.byValue.values());
    }
  }

  private removeLabels(slot: number, labels: Labels): void {
    for (const key in labels) {
      if (!Object.prototype.hasOwnProperty.call(labels, key)) continue;
      const postings = this.byKey.get(key);
      if (!postings) continue;
      const posting = postings.byValue.get(labels[key] as string);
      if (!posting?.slots.delete(slot)) continue;
      if (posting.bits) clearBit(posting.bits, slot);
      if (postings.bits) clearBit(postings.bits, slot);
      postings.size--;
      // A bitmap that no longer pays for itself goes (at half the size that earned it: no flapping).
      if (posting.bits && this.dropsBitmap(posting.slots.size)) posting.bits = undefined;
      if (postings.bits && this.dropsBitmap(postings.size)) postings.bits = undefined;
      if (posting.slots.size === 0) postings.byValue.delete(labels[key] as string);
      if (postings.size === 0) this.byKey.delete(key);
    }
  }

  private wantsBitmap(size: number): boolean {
    return size >= this.bitmapFrom();
  }

  private bitmapFrom(): number {
    return this.bitmapMin === BITMAP_MIN ? Math.max(BITMAP_MIN, (this.all.length * 32) / BITMAP_SHARE) : this.bitmapMin;
  }

  private dropsBitmap(size: number): boolean {
    return 2 * size < this.bitmapFrom();
  }

  private bitmapOf(postings: Iterable<Posting>): Uint32Array {
    const bits = new Uint32Array(this.all.length);
    for (const p of postings) for (const slot of p.slots) setBit(bits, slot);
    return bits;
  }

  /** Makes room for `slot` in every bitmap: the slot space doubles, so this is amortised O(1). */
  private grow(slot: number): void {
    if (slot < this.all.length * 32) return;
    let words = this.all.length;
    while (slot >= words * 32) words *= 2;
    const widen = (bits: Uint32Array) => {
      const wider = new Uint32Array(words);
      wider.set(bits);
      return wider;
    };
    this.all = widen(this.all);
    for (const postings of this.byKey.values()) {
      if (postings.bits) postings.bits = this.dropsBitmap(postings.size) ? undefined : widen(postings.bits);
      for (const p of postings.byValue.values())
        if (p.bits) p.bits = this.dropsBitmap(p.slots.size) ? undefined : widen(p.bits);
    }
  }

  /**
   * The smallest candidate set among the selector's terms, or undefined when no term narrows the
   * fleet (it would be every node). Positive terms (`k in (…)`, `k=v`, `k`) name their postings'
   * union. Negative ones (`!k`, `k notin (…)`, `k!=v`) name what is left of the fleet once the
   * postings they rule out are taken away — taken away only where those postings have bitmaps, so
   * the set may hold non-matches, never miss a match. A selector with a term nothing can match
   * gets an empty set.
   */
  smallestCandidateSet(selector: LabelSelector): CandidateSet | undefined {
    let best: CandidateSet | undefined;
    for (const r of selector.requirements) {
      const set = this.candidatesOf(r);
      if (set !== undefined && (best === undefined || set.size < best.size)) best = set;
      if (best?.size === 0) return best;
    }
    return best;
  }

  private candidatesOf(r: Requirement): CandidateSet | undefined {
    const postings = this.byKey.get(r.key);
    switch (r.op) {
      case "exists":
        return postings ? union([...postings.byValue.values()], postings.size) : EMPTY;
      case "in": {
        // Distinct values: a node has one value per key, so their postings are disjoint.
        const lists = [...new Set(r.values)]
          .map((v) => postings?.byValue.get(v))
          .filter((p): p is Posting => p !== undefined);
        return union(
          lists,
          lists.reduce((n, p) => n + p.slots.size, 0),
        );
      }
      case "doesnotexist":
        return postings?.bits ? this.complement([postings.bits], this.count - postings.size) : undefined;
      case "notin": {
        const ruledOut = [...new Set(r.values)]
          .map((v) => postings?.byValue.get(v))
          .filter((p): p is Posting & { bits: Uint32Array } => p?.bits !== undefined);
        if (ruledOut.length === 0) return undefined;
        return this.complement(
          ruledOut.map((p) => p.bits),
          this.count - ruledOut.reduce((n, p) => n + p.slots.size, 0),
        );
      }
      case "gt":
      case "lt":
        // Only nodes with the key can compare; a superset the matcher then narrows.
        return postings ? union([...postings.byValue.values()], postings.size) : EMPTY;
    }
  }

  /** The slots in use and in none of `minus`: one pass over the slot space's words. */
  private complement(minus: readonly Uint32Array[], size: number): CandidateSet {
    const all = this.all;
    return {
      size,
      forEach(visit) {
        for (let w = 0; w < all.length; w++) {
          let word = all[w] as number;
          for (let m = 0; m < minus.length && word !== 0; m++) word &= ~(minus[m] as Uint32Array)[w]!;
          while (word !== 0) {
            const low = word & -word;
            visit(w * 32 + 31 - Math.clz32(low));
            word ^= low;
          }
        }
      },
    };
  }

  /**
   * The selector as a test of one node: a bit test where the term's posting has a bitmap, a look
   * at the node's labels where not. Equal to matchesLabels on every node in the index.
   */
  matcher(selector: LabelSelector): SlotMatcher {
    const tests = selector.requirements.map((r) => this.testOf(r));
    if (tests.length === 1) return tests[0] as SlotMatcher;
    return (slot, labels) => {
      for (let i = 0; i < tests.length; i++) if (!(tests[i] as SlotMatcher)(slot, labels)) return false;
      return true;
    };
  }

  private testOf(r: Requirement): SlotMatcher {
    const key = r.key;
    const postings = this.byKey.get(key);
    const has = (labels: Labels) => Object.prototype.hasOwnProperty.call(labels, key);
    switch (r.op) {
      case "exists": {
        const bits = postings?.bits;
        return bits ? (slot) => testBit(bits, slot) : (_slot, labels) => has(labels);
      }
      case "doesnotexist": {
        const bits = postings?.bits;
        return bits ? (slot) => !testBit(bits, slot) : (_slot, labels) => !has(labels);
      }
      case "in":
      case "notin": {
        const values = [...new Set(r.values)];
        // Values no node has drop out; the rest are bit tests when every one has a bitmap.
        const present = values.map((v) => postings?.byValue.get(v)).filter((p): p is Posting => p !== undefined);
        const bitmaps = present.every((p) => p.bits !== undefined)
          ? present.map((p) => p.bits as Uint32Array)
          : undefined;
        let isIn: SlotMatcher;
        if (bitmaps === undefined) isIn = (_slot, labels) => has(labels) && values.includes(labels[key] as string);
        else if (bitmaps.length === 0) isIn = () => false;
        else if (bitmaps.length === 1) {
          const bits = bitmaps[0] as Uint32Array;
          isIn = (slot) => testBit(bits, slot);
        } else isIn = (slot) => bitmaps.some((bits) => testBit(bits, slot));
        return r.op === "in" ? isIn : (slot, labels) => !isIn(slot, labels);
      }
      case "gt":
      case "lt":
        // Job constraints' integer comparisons: the list's parser never makes them, but the type allows them.
        return (_slot, labels) => matchesRequirement(r, labels);
    }
  }
}

const EMPTY: CandidateSet = { size: 0, forEach: () => undefined };

function union(postings: readonly Posting[], size: number): CandidateSet {
  return {
    size,
    forEach(visit) {
      for (const p of postings) for (const slot of p.slots) visit(slot);
    },
  };
}

const testBit = (bits: Uint32Array, slot: number): boolean => ((bits[slot >>> 5] as number) & (1 << (slot & 31))) !== 0;
const setBit = (bits: Uint32Array, slot: number): void => {
  bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
};
const clearBit = (bits: Uint32Array, slot: number): void => {
  bits[slot >>> 5] = (bits[slot >>> 5] as number) & ~(1 << (slot & 31));
};
