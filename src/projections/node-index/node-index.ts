import type { Health, Membership, Resources } from "../../events/catalog/node-info.ts";
import type { LabelSelector } from "../../labels/label-selector.ts";
import { nodeLabels } from "../../labels/node-labels.ts";
import type { NodeView } from "../node-view.ts";
import { LabelIndex, type CandidateSet, type SlotMatcher } from "./label-index.ts";
import { RestrictionCounts, type Restrictions } from "./restriction-counts.ts";
import { NODE_ORDERS, sortKeyOf, statusKeyOf, type NodeOrder } from "./node-order.ts";
import { SortedCursor, SortedEntries, compareKeys, type SortKey } from "./sorted-entries.ts";

const MEMBERSHIPS: readonly Membership[] = ["PENDING", "APPROVED", "REJECTED"];
const HEALTHS: readonly Health[] = ["HEALTHY", "UNHEALTHY", "UNKNOWN"];
const PARTITIONS = MEMBERSHIPS.length * HEALTHS.length;
const partitionOf = (view: NodeView) =>
  MEMBERSHIPS.indexOf(view.membership) * HEALTHS.length + HEALTHS.indexOf(view.health);

export type StatusFilter = Health | "CONNECTED" | "DISCONNECTED";

export interface NodeIndexQuery {
  readonly order: NodeOrder;
  readonly reverse: boolean;
  /** The last entry of the previous page: this page starts strictly after it. */
  readonly after?: { readonly key: SortKey; readonly id: string };
  readonly approval?: Membership;
  readonly status?: StatusFilter;
  readonly selector: LabelSelector;
  /** Only cordoned nodes (true) or only schedulable ones (false). */
  readonly cordoned?: boolean;
  /** Only nodes whose drain is in this status (`none`: no drain). */
  readonly drain?: "draining" | "drained" | "expired" | "none";
  readonly limit: number;
}

export interface NodeIndexPage {
  readonly views: NodeView[];
  /**
   * Where the next page starts (strictly after): the last view on the page, or the last entry
   * the walk looked at when its scan budget ended the page early.
   */
  readonly lastKey: SortKey | undefined;
  readonly lastId: string | undefined;
  /** More matching nodes may follow this page. */
  readonly more: boolean;
  /** Index entries looked at: at most limit + 1 + the scan budget (more without a limit). */
  readonly visited: number;
}

/** Capacity numbers kept per node: AvailableCapacity's CPU, Memory, Disk and GPU (NaN: left out of the report). */
const CAPACITY_WIDTH = 4;
const CAPACITY_KEYS = ["CPU", "Memory", "Disk", "GPU"] as const;
const INITIAL_SLOTS = 1024;

/** The orders whose key is the same for every node of a partition (they walk the id order's sets). */
const PARTITION_KEYED: ReadonlySet<NodeOrder> = new Set<NodeOrder>(["approval", "status"]);
const ID_ORDER = NODE_ORDERS.indexOf("id");
/** The capacity orders, in the order of CAPACITY_KEYS. */
const CAPACITY_ORDERS: readonly NodeOrder[] = ["available_cpu", "available_memory", "available_disk", "available_gpu"];

/**
 * A limited query's page looks at no more than SCAN_PER_NODE × limit (at least MIN_SCAN)
 * non-matching index entries, ≈ 0.2–0.5 µs each, about what rendering the page's nodes costs:
 * a selector that almost no node matches then ends its page early, with the matches found so
 * far and a next_token that resumes the walk where it stopped (Kubernetes' list returns fewer
 * than limit items with a continue token too). A request's CPU is bounded by its limit, whatever
 * the fleet size. Without a limit the whole list is asked for, which is O(N) anyway: no budget
 * then (Bacalhau's CLI sends no limit unless told and never reads NextToken).
 */
export const SCAN_PER_NODE = 16;
export const MIN_SCAN = 1024;

/**
 * Below this many candidates, a label selector's posting lists are cheaper to filter and rank
 * than a walk of the order index that may skip many non-matching nodes first.
 */
const SMALL_CANDIDATE_SET = 512;

/** What walking one entry of an order costs, in candidates ranked (measured: ≈ 0.1–0.14 µs against ≈ 0.03–0.06 µs). */
const WALK_STEP_COST = 4;

/**
 * The node list's read model, indexed for its queries. Fed with view changes (`update`) and
 * capacity reports (`setCapacity`); knows nothing of how a view is computed.
 *
 * - One ordered set of (sort key, node id) per order and per (membership, health) partition:
 *   approval and status filters pick partitions, so every entry walked matches them; a page
 *   merges at most nine seeks, O(log N) each, then takes O(page) steps.
 * - Label selectors filter during that walk, compiled to bit tests where their postings have
 *   bitmaps. Every term names a candidate set (label-index.ts): positive terms (`k=v`,
 *   `k in (…)`, `k`) their postings, negative ones (`k!=v`, `!k`, `notin`) the fleet less the
 *   postings they rule out. When ranking the smallest costs less than walking to a full page
 *   (ranksFirst), or the walk has skipped as many nodes as it holds, its candidates are filtered
 *   and ranked instead (O(C log page)). A selector no term narrows (its negative terms rule out
 *   postings too small for bitmaps) walks, skipping its non-matches, so a limited query's page
 *   ends after its scan budget of skips (SCAN_PER_NODE), possibly short or empty, with a cursor
 *   to resume from.
 */
export class NodeIndex {
  /**
   * A slot per node in the list, and per slot its view, partition and last reported available
   * capacity in parallel arrays: no object per node (an entry object and the report's capacity
   * object cost ≈ 90 B more per node). The sort keys are computed from these when needed.
   */
  private readonly slots = new Map<string, number>();
  private views: (NodeView | undefined)[] = [];
  private partitions = new Uint8Array(INITIAL_SLOTS);
  /** CAPACITY_WIDTH numbers per slot; HAS_CAPACITY says whether a report was kept at all. */
  private capacity = new Float64Array(INITIAL_SLOTS * CAPACITY_WIDTH);
  private hasCapacity = new Uint8Array(INITIAL_SLOTS);
  /**
   * 1 where the slot's view has ComputeNodeInfo (capacity shows only on those): ranking reads it instead of the view.
   */
  private computeInfo = new Uint8Array(INITIAL_SLOTS);
  private free: number[] = [];
  /** reindex()'s keys before the change, per order (kept to spare an array per call). */
  private readonly keysBefore: (SortKey | undefined)[] = NODE_ORDERS.map(() => undefined);
  /** Capacity reported by a node that has no entry (its view not folded yet, or deleted): rare. */
  private readonly pendingCapacity = new Map<string, Resources>();
  /**
   * Per order and partition, the ordered set of (key, id). The approval and status orders' key
   * is the partition's own, so within a partition they are the id order: they read its sets
   * (with that constant key) instead of holding two more entries per node.
   */
  private readonly orders: OrderedSet[][] = orderSets();
  /**
   * Per order, whether it keeps sets of its own (else it reads the id order's). The capacity orders do only once some
   * node has reported capacity: until then every node's key in them is −0, so they are the id order (a start, and
   * the cluster as of a past moment, which no report reaches), and a view change moves a node in two orders, not six.
   */
  private readonly ownSets: boolean[] = NODE_ORDERS.map((o) => !PARTITION_KEYED.has(o) && !CAPACITY_ORDERS.includes(o));
  private readonly labels: LabelIndex;
  /** Every node id ever seen, deleted ones too (history look-ups by prefix). */
  private readonly everSeen = new SortedEntries();
  /** During updateMany: each order set's changes (by id), applied together at its end. */
  private pending: Map<OrderedSet, PendingEntries> | undefined;
  private readonly smallCandidateSet: number;
  private readonly costModel: boolean;
  private readonly scanBudget: (limit: number) => number;
  private readonly restrictionCounts = new RestrictionCounts();

  /**
   * `smallCandidateSet` lets tests force either plan, `scanBudget` (non-matching entries a page
   * of `limit` may look at) the early end of a page, `bitmapMin` which label postings get bitmaps
   * (label-index.ts); the defaults suit every fleet size.
   */
  constructor(
    options: {
      readonly smallCandidateSet?: number;
      readonly scanBudget?: (limit: number) => number;
      readonly bitmapMin?: number;
    } = {},
  ) {
    this.labels = new LabelIndex(options.bitmapMin === undefined ? {} : { bitmapMin: options.bitmapMin });
    this.smallCandidateSet = options.smallCandidateSet ?? SMALL_CANDIDATE_SET;
    this.costModel = options.smallCandidateSet === undefined;
    this.scanBudget = options.scanBudget ?? ((limit) => Math.max(MIN_SCAN, SCAN_PER_NODE * limit));
  }

  get size(): number {
    return this.slots.size;
  }

  /** Nodes in the cluster per (membership, health), read off the partitions: O(1) in the fleet size. */
  counts(): { membership: Membership; health: Health; count: number }[] {
    const sets = this.orders[ID_ORDER] as OrderedSet[];
    const out: { membership: Membership; health: Health; count: number }[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const count = sets[p]?.size ?? 0;
      if (count > 0)
        out.push({
          membership: MEMBERSHIPS[Math.floor(p / HEALTHS.length)] as Membership,
          health: HEALTHS[p % HEALTHS.length] as Health,
          count,
        });
    }
    return out;
  }

  /** Cordoned nodes and drains by status, of the nodes listed: O(1) in the fleet size. */
  restrictions(): Restrictions {
    return this.restrictionCounts.figures();
  }

  get(nodeId: string): NodeView | undefined {
    const slot = this.slots.get(nodeId);
    return slot === undefined ? undefined : this.views[slot];
  }

  /**
   * A node's view changed; `view` undefined or deleted takes it out of the list. The index keeps
   * the view's own id string (`view.nodeId`), whichever string the caller passed.
   */
  update(nodeId: string, view: NodeView | undefined): void {
    const old = this.slots.get(nodeId);
    if (view) this.everSeen.add(view.nodeId, view.nodeId);
    if (!view || view.deleted) {
      if (old !== undefined) this.remove(old);
      return;
    }
    if (old === undefined) {
      const id = view.nodeId;
      const slot = this.newSlot();
      this.slots.set(id, slot);
      this.views[slot] = view;
      this.restrictionCounts.count(view, 1);
      this.partitions[slot] = partitionOf(view);
      this.computeInfo[slot] = view.info.ComputeNodeInfo === undefined ? 0 : 1;
      const available = this.pendingCapacity.get(id);
      this.pendingCapacity.delete(id);
      this.writeCapacity(slot, available);
      this.insert(slot);
      this.labels.add(slot, nodeLabels(view));
      return;
    }
    const before = this.views[old] as NodeView;
    if (nodeLabels(before) !== nodeLabels(view)) this.labels.replace(old, nodeLabels(before), nodeLabels(view));
    this.reindex(old, view, undefined);
  }

  /**
   * update() for many nodes at once, each change in turn (a node at most once): the same index as after each update,
   * with each order set's entries moved together at the end, one merge per set when they are many (a fold's
   * thousands of view changes), instead of a seek and a move per entry.
   */
  updateMany(changes: Iterable<readonly [string, NodeView]>): void {
    const pending = new Map<OrderedSet, PendingEntries>();
    this.pending = pending;
    try {
      for (const [nodeId, view] of changes) this.update(nodeId, view);
    } finally {
      this.pending = undefined;
      for (const [set, { removed, added }] of pending) {
        if (set instanceof SortedEntries) set.replaceMany(removed, added);
        else {
          for (const [id, key] of removed) set.delete(key, id);
          for (const [id, key] of added) set.add(key, id);
        }
      }
    }
  }

  private addEntry(set: OrderedSet | undefined, key: SortKey, id: string): void {
    if (set === undefined) return;
    if (this.pending === undefined) set.add(key, id);
    else this.pendingOf(set).added.set(id, key);
  }

  private deleteEntry(set: OrderedSet | undefined, key: SortKey, id: string): void {
    if (set === undefined) return;
    if (this.pending === undefined) {
      set.delete(key, id);
      return;
    }
    const pending = this.pendingOf(set);
    // Added in this batch: not in the set yet.
    if (pending.added.has(id)) pending.added.delete(id);
    else pending.removed.set(id, key);
  }

  private pendingOf(set: OrderedSet): PendingEntries {
    let entries = this.pending?.get(set);
    if (entries === undefined) {
      entries = { removed: new Map(), added: new Map() };
      this.pending?.set(set, entries);
    }
    return entries;
  }

  /**
   * A node's latest reported available capacity (undefined: none reported since its liveness
   * began). Its numbers are copied: the report object is not kept.
   */
  setCapacity(nodeId: string, available: Resources | undefined): void {
    if (available !== undefined) this.keepCapacityOrders();
    const slot = this.slots.get(nodeId);
    if (slot === undefined) {
      if (available === undefined) this.pendingCapacity.delete(nodeId);
      else this.pendingCapacity.set(nodeId, available);
      return;
    }
    if (this.sameCapacity(slot, available)) return;
    this.reindex(slot, this.views[slot] as NodeView, available ?? null);
  }

  /** The capacity orders' own sets, made from the id order's (every key −0 until now: no capacity was kept). */
  private keepCapacityOrders(): void {
    for (const order of CAPACITY_ORDERS) {
      const o = NODE_ORDERS.indexOf(order);
      if (this.ownSets[o]) continue;
      this.orders[o] = (this.orders[ID_ORDER] as SortedEntries[]).map((byId) => {
        const set = new SortedEntries();
        for (const [, id] of byId.entries()) set.add(-0, id);
        return set;
      });
      this.ownSets[o] = true;
    }
  }

  private newSlot(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    const slot = this.views.length;
    this.views.push(undefined);
    if (slot >= this.partitions.length) {
      const n = this.partitions.length * 2;
      const partitions = new Uint8Array(n);
      partitions.set(this.partitions);
      this.partitions = partitions;
      const has = new Uint8Array(n);
      has.set(this.hasCapacity);
      this.hasCapacity = has;
      const compute = new Uint8Array(n);
      compute.set(this.computeInfo);
      this.computeInfo = compute;
      const capacity = new Float64Array(n * CAPACITY_WIDTH);
      capacity.set(this.capacity);
      this.capacity = capacity;
    }
    return slot;
  }

  private writeCapacity(slot: number, available: Resources | undefined): void {
    this.hasCapacity[slot] = available === undefined ? 0 : 1;
    if (available === undefined) return;
    for (let i = 0; i < CAPACITY_WIDTH; i++)
      this.capacity[slot * CAPACITY_WIDTH + i] = available[CAPACITY_KEYS[i] as keyof Resources] ?? Number.NaN;
  }

  /** The slot's capacity as the report gave it (a new object), or undefined for none. */
  private availableOf(slot: number): Resources | undefined {
    if (this.hasCapacity[slot] === 0) return undefined;
    const out: { -readonly [K in keyof Resources]: number } = {};
    for (let i = 0; i < CAPACITY_WIDTH; i++) {
      const v = this.capacity[slot * CAPACITY_WIDTH + i] as number;
      if (!Number.isNaN(v)) out[CAPACITY_KEYS[i] as keyof Resources] = v;
    }
    return out;
  }

  private sameCapacity(slot: number, available: Resources | undefined): boolean {
    if (available === undefined || this.hasCapacity[slot] === 0)
      return available === undefined && this.hasCapacity[slot] === 0;
    for (let i = 0; i < CAPACITY_WIDTH; i++) {
      const kept = this.capacity[slot * CAPACITY_WIDTH + i] as number;
      const v = available[CAPACITY_KEYS[i] as keyof Resources] ?? Number.NaN;
      if (!(kept === v || (Number.isNaN(kept) && Number.isNaN(v)))) return false;
    }
    return true;
  }

  /** The slot's sort key in order `o`, for `view`. */
  private keyOf(slot: number, view: NodeView, o: number): SortKey {
    return sortKeyOf(
      view,
      NODE_ORDERS[o] as NodeOrder,
      this.capacity,
      this.hasCapacity[slot] === 0 ? -1 : slot * CAPACITY_WIDTH,
    );
  }

  /**
   * keyOf for one order, as a function of the slot alone where it can be (ranking computes the
   * key of every candidate): capacity from the typed arrays, membership and health from the
   * partition. Equal to keyOf on every slot in the index.
   */
  private rankKey(o: number): (slot: number) => SortKey {
    const order = NODE_ORDERS[o] as NodeOrder;
    const field = CAPACITY_ORDERS.indexOf(order);
    if (field >= 0) {
      const capacity = this.capacity;
      const has = this.hasCapacity;
      const compute = this.computeInfo;
      return (slot) => {
        if (has[slot] === 0 || compute[slot] === 0) return -0;
        const v = capacity[slot * CAPACITY_WIDTH + field] as number;
        return Number.isNaN(v) ? -0 : -v;
      };
    }
    if (order === "approval")
      return (slot) => MEMBERSHIPS[Math.floor((this.partitions[slot] as number) / HEALTHS.length)] as Membership;
    if (order === "status")
      return (slot) => statusKeyOf(HEALTHS[(this.partitions[slot] as number) % HEALTHS.length] as Health);
    return (slot) => this.keyOf(slot, this.views[slot] as NodeView, o);
  }

  private insert(slot: number): void {
    const view = this.views[slot] as NodeView;
    const partition = this.partitions[slot] as number;
    for (let o = 0; o < NODE_ORDERS.length; o++) {
      if (!this.ownSets[o]) continue;
      this.addEntry((this.orders[o] as OrderedSet[])[partition], this.keyOf(slot, view, o), view.nodeId);
    }
  }

  private remove(slot: number): void {
    const view = this.views[slot] as NodeView;
    const id = view.nodeId;
    const partition = this.partitions[slot] as number;
    for (let o = 0; o < NODE_ORDERS.length; o++) {
      if (!this.ownSets[o]) continue;
      this.deleteEntry((this.orders[o] as OrderedSet[])[partition], this.keyOf(slot, view, o), id);
    }
    this.labels.remove(slot, nodeLabels(view));
    // The capacity outlives the entry, as the report outlives the view (until liveness ends).
    const available = this.availableOf(slot);
    if (available !== undefined) this.pendingCapacity.set(id, available);
    this.slots.delete(id);
    this.restrictionCounts.count(view, -1);
    this.views[slot] = undefined;
    this.hasCapacity[slot] = 0;
    this.free.push(slot);
  }

  /**
   * Moves only the keys that changed: a capacity report touches at most the four capacity orders.
   * `available`: the new capacity, null for none, undefined to keep the slot's.
   */
  private reindex(slot: number, view: NodeView, available: Resources | null | undefined): void {
    const old = this.views[slot] as NodeView;
    const id = old.nodeId;
    const oldPartition = this.partitions[slot] as number;
    const partition = partitionOf(view);
    const before = this.keysBefore;
    for (let o = 0; o < NODE_ORDERS.length; o++) before[o] = this.ownSets[o] ? this.keyOf(slot, old, o) : undefined;
    if (available !== undefined) this.writeCapacity(slot, available ?? undefined);
    for (let o = 0; o < NODE_ORDERS.length; o++) {
      const was = before[o];
      if (was === undefined) continue;
      const after = this.keyOf(slot, view, o);
      if (partition === oldPartition && compareKeys(was, after) === 0) continue;
      const sets = this.orders[o] as OrderedSet[];
      this.deleteEntry(sets[oldPartition], was, id);
      this.addEntry(sets[partition], after, id);
    }
    if (old !== view) {
      this.restrictionCounts.count(old, -1);
      this.restrictionCounts.count(view, 1);
    }
    this.views[slot] = view;
    this.partitions[slot] = partition;
    this.computeInfo[slot] = view.info.ComputeNodeInfo === undefined ? 0 : 1;
  }

  /** Current node ids starting with `prefix`, in id order: O(log N + matches). */
  idsWithPrefix(prefix: string): string[] {
    return prefix === ""
      ? []
      : this.walkPrefix(prefix, (sets) => this.merge(sets, false, { key: prefix, id: prefix, strict: false }));
  }

  /** Node ids ever seen (deleted ones too) starting with `prefix`. */
  everSeenWithPrefix(prefix: string): string[] {
    return prefix === ""
      ? []
      : this.walkPrefix(prefix, () => [this.everSeen.seek(false, { key: prefix, id: prefix, strict: false })]);
  }

  private walkPrefix(prefix: string, cursors: (sets: OrderedSet[]) => SortedCursor[]): string[] {
    const walk = new MergedWalk(cursors(this.orders[ID_ORDER] as OrderedSet[]), false);
    const out: string[] = [];
    for (let c = walk.head; c !== undefined && c.id.startsWith(prefix); walk.advance(), c = walk.head) out.push(c.id);
    return out;
  }

  private merge(
    sets: readonly OrderedSet[],
    descending: boolean,
    from?: { key: SortKey; id: string; strict: boolean },
  ): SortedCursor[] {
    return sets.filter((s) => s.size > 0).map((s) => s.seek(descending, from));
  }

  query(q: NodeIndexQuery): NodeIndexPage {
    const o = NODE_ORDERS.indexOf(q.order);
    const partitions = selectedPartitions(q.approval, q.status);
    const sets = partitions.map((p) => (this.orders[o] as OrderedSet[])[p] as OrderedSet);
    const filtered = q.selector.requirements.length > 0;
    const candidates = filtered ? this.labels.smallestCandidateSet(q.selector) : undefined;
    const labelMatches = filtered ? this.labels.matcher(q.selector) : undefined;
    // Few nodes are cordoned or drained: a filter on it skips entries as a label selector does (same scan budget).
    const { cordoned, drain } = q;
    const operatorMatches = (view: NodeView): boolean =>
      (cordoned === undefined || (view.cordon !== undefined) === cordoned) &&
      (drain === undefined || (view.drain?.status ?? "none") === drain);
    const matches: SlotMatcher | undefined =
      cordoned === undefined && drain === undefined
        ? labelMatches
        : (slot, labels) =>
            operatorMatches(this.views[slot] as NodeView) && (labelMatches === undefined || labelMatches(slot, labels));
    if (candidates !== undefined && this.ranksFirst(candidates.size, sets, q.limit))
      return this.rank(q, o, partitions, candidates, matches);

    const budget = Number.isFinite(q.limit) ? this.scanBudget(q.limit) : Number.POSITIVE_INFINITY;
    // The walk skips at most as many nodes as the candidate set holds before ranking that
    // instead, when the skips and the ranking together fit the budget.
    const rankAt =
      candidates !== undefined && 2 * candidates.size <= budget ? candidates.size : Number.POSITIVE_INFINITY;
    const walk = new MergedWalk(
      this.merge(sets, q.reverse, q.after && { key: q.after.key, id: q.after.id, strict: true }),
      q.reverse,
    );
    const views: NodeView[] = [];
    let lastKey: SortKey | undefined;
    let lastId: string | undefined;
    let skipped = 0;
    for (let c = walk.head; c !== undefined; walk.advance(), c = walk.head) {
      const slot = this.slots.get(c.id) as number;
      const view = this.views[slot] as NodeView;
      if (matches === undefined || matches(slot, nodeLabels(view))) {
        if (views.length === q.limit)
          return { views, lastKey, lastId, more: true, visited: views.length + skipped + 1 };
        views.push(view);
        lastKey = c.key;
        lastId = c.id;
      } else if (++skipped >= rankAt && candidates) {
        const ranked = this.rank(q, o, partitions, candidates, matches);
        return { ...ranked, visited: ranked.visited + views.length + skipped };
      } else if (skipped >= budget) {
        // Out of budget: the next page resumes after this entry, if any entry follows it.
        const [key, id] = [c.key, c.id];
        walk.advance();
        return { views, lastKey: key, lastId: id, more: walk.head !== undefined, visited: views.length + skipped };
      }
    }
    return { views, lastKey, lastId, more: false, visited: views.length + skipped };
  }

  /**
   * Whether ranking a candidate set of `size` costs less than walking the order until the page
   * is full. Candidates are taken to be spread evenly over the walk, so a page of `limit` walks
   * ≈ (limit + 1) × entries / size entries; a walked entry (a merge step, a look-up by id) costs
   * about WALK_STEP_COST candidates ranked. With `smallCandidateSet` set (tests), only that rule.
   */
  private ranksFirst(size: number, sets: readonly OrderedSet[], limit: number): boolean {
    if (size <= Math.max(this.smallCandidateSet, limit)) return true;
    if (!this.costModel) return false;
    let entries = 0;
    for (const s of sets) entries += s.size;
    if (entries === 0) return false;
    const walk = ((Math.min(limit, entries) + 1) * entries) / Math.max(1, size);
    return size <= WALK_STEP_COST * walk;
  }

  /**
   * Filters candidates and keeps the first limit + 1 in order: O(C log limit) comparisons
   * (insertions into the kept run are rare once it is full), or one sort of the matches when
   * the page may hold them all.
   */
  private rank(
    q: NodeIndexQuery,
    o: number,
    partitions: readonly number[],
    candidates: CandidateSet,
    matches: SlotMatcher | undefined,
  ): NodeIndexPage {
    let wanted = 0;
    for (const p of partitions) wanted |= 1 << p;
    const sign = q.reverse ? -1 : 1;
    const cmp = (a: Ranked, b: Ranked) => sign * (compareKeys(a.key, b.key) || compareKeys(a.id, b.id));
    const keep = q.limit + 1;
    const bounded = keep < candidates.size;
    const after = q.after;
    // The kept run is a heap with its last entry on top, so a candidate that beats it costs
    // O(log limit), not a move of the run; most candidates of a large set fall behind it once it
    // is full and are turned away on their key and id alone, before anything is allocated.
    const best: Ranked[] = [];
    let worst: Ranked | undefined;
    const keyOf = this.rankKey(o);
    candidates.forEach((slot) => {
      if (((wanted >>> (this.partitions[slot] as number)) & 1) === 0) return;
      const key = keyOf(slot);
      // On the key alone first: in most orders it comes from typed arrays, and the view (a
      // cache miss per candidate in a large fleet) is needed only to break a tie or keep it.
      if (after && sign * compareKeys(key, after.key) < 0) return;
      if (worst && sign * compareKeys(key, worst.key) > 0) return;
      const view = this.views[slot] as NodeView;
      const id = view.nodeId;
      if (after && sign * (compareKeys(key, after.key) || compareKeys(id, after.id)) <= 0) return;
      if (worst && sign * (compareKeys(key, worst.key) || compareKeys(id, worst.id)) >= 0) return;
      // The selector last: once the kept run is full, most candidates fall behind it on their key.
      if (matches && !matches(slot, nodeLabels(view))) return;
      const ranked = { key, id, view };
      if (!bounded) {
        best.push(ranked);
        return;
      }
      if (best.length < keep) heapPush(best, ranked, cmp);
      else heapReplaceTop(best, ranked, cmp);
      if (best.length === keep) worst = best[0];
    });
    best.sort(cmp);
    const page = best.slice(0, q.limit);
    const last = page[page.length - 1];
    return {
      views: page.map((b) => b.view),
      lastKey: last?.key,
      lastId: last?.id,
      more: best.length > page.length,
      visited: candidates.size,
    };
  }
}

interface Ranked {
  readonly key: SortKey;
  readonly id: string;
  readonly view: NodeView;
}

/** Adds to a heap whose top (index 0) is its greatest entry under `cmp`. */
function heapPush<T>(heap: T[], item: T, cmp: (a: T, b: T) => number): void {
  let i = heap.length;
  heap.push(item);
  while (i > 0) {
    const parent = (i - 1) >>> 1;
    if (cmp(heap[parent] as T, item) >= 0) break;
    heap[i] = heap[parent] as T;
    i = parent;
  }
  heap[i] = item;
}

/** Puts `item` in place of the heap's greatest entry (which it must not exceed). */
function heapReplaceTop<T>(heap: T[], item: T, cmp: (a: T, b: T) => number): void {
  const n = heap.length;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const c = r < n && cmp(heap[r] as T, heap[l] as T) > 0 ? r : l;
    if (cmp(heap[c] as T, item) <= 0) break;
    heap[i] = heap[c] as T;
    i = c;
  }
  heap[i] = item;
}

/**
 * The heads' entries merged in walk order. The head with the next entry keeps that place until
 * another head's entry comes first: while it does, a step is one comparison with the best of the
 * others (which have not moved), not one with each of them.
 */
class MergedWalk {
  private current: SortedCursor | undefined;
  private rival: SortedCursor | undefined;

  constructor(
    private readonly heads: readonly SortedCursor[],
    private readonly descending: boolean,
  ) {
    this.pick();
  }

  /** The cursor on the next entry, or undefined when every head is done. */
  get head(): SortedCursor | undefined {
    return this.current;
  }

  advance(): void {
    const c = this.current;
    if (c === undefined) return;
    c.next();
    if (!c.done && (this.rival === undefined || this.comesFirst(c, this.rival))) return;
    this.pick();
  }

  private comesFirst(a: SortedCursor, b: SortedCursor): boolean {
    const c = compareKeys(a.key, b.key) || compareKeys(a.id, b.id);
    return this.descending ? c > 0 : c < 0;
  }

  private pick(): void {
    let best: SortedCursor | undefined;
    let second: SortedCursor | undefined;
    for (const h of this.heads) {
      if (h.done) continue;
      if (best === undefined || this.comesFirst(h, best)) {
        second = best;
        best = h;
      } else if (second === undefined || this.comesFirst(h, second)) second = h;
    }
    this.current = best;
    this.rival = second;
  }
}

/** An order set's changes during updateMany, by node id: the entries to remove, then those to add. */
interface PendingEntries {
  readonly removed: Map<string, SortKey>;
  readonly added: Map<string, SortKey>;
}

/** What a page walks: an order's entries in one partition. */
interface OrderedSet {
  readonly size: number;
  add(key: SortKey, id: string): boolean;
  delete(key: SortKey, id: string): boolean;
  seek(
    descending: boolean,
    from?: { readonly key: SortKey; readonly id: string; readonly strict: boolean },
  ): SortedCursor;
}

/**
 * The id order's entries of one partition seen under another key that all of them share (their
 * membership, or their health's rank). Read-only: the id order's set is kept by the index.
 */
class ConstantKeyEntries implements OrderedSet {
  constructor(
    private readonly byId: SortedEntries,
    private readonly key: SortKey,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  add(): boolean {
    throw new Error("ConstantKeyEntries is read-only: its entries are the id order's");
  }

  delete(): boolean {
    throw new Error("ConstantKeyEntries is read-only: its entries are the id order's");
  }

  seek(
    descending: boolean,
    from?: { readonly key: SortKey; readonly id: string; readonly strict: boolean },
  ): SortedCursor {
    if (from === undefined) return this.byId.seek(descending, undefined, this.key);
    const c = compareKeys(this.key, from.key);
    // Every entry's key is this.key: a start on another key takes all of them or none.
    if (c !== 0)
      return (descending ? c < 0 : c > 0)
        ? this.byId.seek(descending, undefined, this.key)
        : SortedCursor.empty(descending);
    return this.byId.seek(descending, { key: from.id, id: from.id, strict: from.strict }, this.key);
  }
}

function orderSets(): OrderedSet[][] {
  const byId = Array.from({ length: PARTITIONS }, () => new SortedEntries());
  return NODE_ORDERS.map((order) => {
    if (order === "id") return byId;
    if (order === "approval")
      return byId.map(
        (set, p) => new ConstantKeyEntries(set, MEMBERSHIPS[Math.floor(p / HEALTHS.length)] as Membership),
      );
    if (order === "status")
      return byId.map((set, p) => new ConstantKeyEntries(set, statusKeyOf(HEALTHS[p % HEALTHS.length] as Health)));
    // Until a node reports capacity (NodeIndex.ownSets).
    if (CAPACITY_ORDERS.includes(order)) return byId.map((set) => new ConstantKeyEntries(set, -0));
    return Array.from({ length: PARTITIONS }, () => new SortedEntries());
  });
}

function selectedPartitions(approval: Membership | undefined, status: StatusFilter | undefined): number[] {
  const healths: readonly Health[] =
    status === undefined
      ? HEALTHS
      : status === "CONNECTED"
        ? ["HEALTHY"]
        : status === "DISCONNECTED"
          ? ["UNHEALTHY", "UNKNOWN"]
          : [status];
  const memberships = approval === undefined ? MEMBERSHIPS : [approval];
  return memberships.flatMap((m) => healths.map((h) => MEMBERSHIPS.indexOf(m) * HEALTHS.length + HEALTHS.indexOf(h)));
}
