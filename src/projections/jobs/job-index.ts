import type { JobState } from "../../../machines/job/job-state.ts";
import { matchesLabels, type LabelSelector } from "../../labels/label-selector.ts";
import { SortedEntries, type SortKey } from "../node-index/sorted-entries.ts";

/** Bacalhau's job list orders (`order_by`). */
export const JOB_ORDERS = ["created_at", "modified_at", "id"] as const;
export type JobOrder = (typeof JOB_ORDERS)[number];

const keyOf = (order: JobOrder, job: JobState): SortKey =>
  order === "created_at" ? job.createTime : order === "modified_at" ? job.modifyTime : job.jobId;

const nameKey = (namespace: string, name: string): string => `${namespace}\u0000${name}`;

/**
 * A label selector that matches almost no job ends a page after looking at this many, with a
 * cursor to go on from: a page never costs a pass over every job.
 */
const SCAN_BUDGET = 10_000;

export interface JobPage {
  readonly jobs: JobState[];
  /** More may follow: continue after (lastKey, lastId). */
  readonly more: boolean;
  readonly lastKey: SortKey | undefined;
  readonly lastId: string | undefined;
}

export interface JobQuery {
  readonly order: JobOrder;
  readonly reverse: boolean;
  readonly after?: { readonly key: SortKey; readonly id: string };
  /** Undefined: every namespace. */
  readonly namespace?: string;
  readonly selector: LabelSelector;
  readonly limit: number;
}

/**
 * The submitted jobs in each list order, over all namespaces and per namespace: a page is a seek,
 * O(log N), and a walk of the page (plus what a label selector skips, at most SCAN_BUDGET).
 */
export class JobIndex {
  private readonly all = new Map<JobOrder, SortedEntries>(JOB_ORDERS.map((o) => [o, new SortedEntries()]));
  private readonly byNamespace = new Map<string, Map<JobOrder, SortedEntries>>();
  /** Job ids by namespace and name, in submission order: names are not unique (Name defaults to the id). */
  private readonly byName = new Map<string, string[]>();

  get size(): number {
    return (this.all.get("id") as SortedEntries).size;
  }

  update(before: JobState | undefined, after: JobState): void {
    const namespace = after.spec?.Namespace;
    if (namespace === undefined) return;
    const name = (after.spec as NonNullable<JobState["spec"]>).Name;
    // A job's spec (so its name) is set once, at submission. A name that is the job's own id (the
    // default) is found by id: not indexed, so most jobs cost the name index nothing.
    if (before?.spec === undefined && name !== after.jobId) {
      const key = nameKey(namespace, name);
      const ids = this.byName.get(key);
      if (ids) ids.push(after.jobId);
      else this.byName.set(key, [after.jobId]);
    }
    let sets = this.byNamespace.get(namespace);
    if (!sets) {
      sets = new Map(JOB_ORDERS.map((o) => [o, new SortedEntries()]));
      this.byNamespace.set(namespace, sets);
    }
    for (const order of JOB_ORDERS) {
      const key = keyOf(order, after);
      const old = before?.spec === undefined ? undefined : keyOf(order, before);
      if (old === key) continue;
      for (const set of [this.all.get(order) as SortedEntries, sets.get(order) as SortedEntries]) {
        if (old !== undefined) set.delete(old, after.jobId);
        set.add(key, after.jobId);
      }
    }
  }

  /** The ids of the jobs named `name` in `namespace`, oldest first (not those whose name is their id). */
  idsNamed(namespace: string, name: string): readonly string[] {
    return this.byName.get(nameKey(namespace, name)) ?? [];
  }

  /** At most `max` job ids starting with `prefix`, in id order: a seek, O(log N), and a walk of what it returns. */
  idsWithPrefix(prefix: string, max: number): string[] {
    const out: string[] = [];
    if (prefix === "") return out;
    const set = this.all.get("id") as SortedEntries;
    for (
      const cursor = set.seek(false, { key: prefix, id: prefix, strict: false });
      !cursor.done && out.length < max && cursor.id.startsWith(prefix);
      cursor.next()
    )
      out.push(cursor.id);
    return out;
  }

  query(q: JobQuery, get: (jobId: string) => JobState | undefined): JobPage {
    const set = q.namespace === undefined ? this.all.get(q.order) : this.byNamespace.get(q.namespace)?.get(q.order);
    const jobs: JobState[] = [];
    if (!set || set.size === 0) return { jobs, more: false, lastKey: undefined, lastId: undefined };
    const cursor = set.seek(q.reverse, q.after && { key: q.after.key, id: q.after.id, strict: true });
    let scanned = 0;
    let lastKey: SortKey | undefined;
    let lastId: string | undefined;
    for (; !cursor.done; cursor.next()) {
      if (jobs.length >= q.limit || scanned >= SCAN_BUDGET) return { jobs, more: true, lastKey, lastId };
      scanned++;
      lastKey = cursor.key;
      lastId = cursor.id;
      const job = get(cursor.id);
      if (job?.spec && (q.selector.requirements.length === 0 || matchesLabels(q.selector, job.spec.Labels)))
        jobs.push(job);
    }
    return { jobs, more: false, lastKey, lastId };
  }
}
