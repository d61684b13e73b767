import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { EventStore, RecordedEvent } from "../../events/store/event-store.ts";
import { nodeStream } from "../../events/streams.ts";
import { nodeLabels } from "../../labels/node-labels.ts";
import { EventEnvelope } from "../event-envelope.ts";
import { NodeViews } from "../node-views.ts";
import {
  auditChangeOf,
  JOB_CHANGES,
  labelChange,
  NODE_CHANGES,
  type AuditChange,
  type LabelChange,
} from "./audit-change.ts";

/** What changed in the cluster between two store positions, in store order. */
export interface ClusterDiff {
  readonly nodes: AuditChange[];
  readonly jobs: AuditChange[];
  /** Every listed event up to here is in the lists: `to`, or short of it when the lists reached `maxChanges`. */
  readonly through: number;
}

const PAGE = 1_000;
const TYPES = [...Object.keys(NODE_CHANGES), ...Object.keys(JOB_CHANGES)];
const LABEL_EVENTS = new Set(["NodeLabelsSet", "NodeInfoUpdated"]);

/**
 * The changes to nodes and jobs between two moments of the log, read from the events in (from, to] with the feed's
 * filtered reads. Where a change is a before and after (a node's labels), the node's own stream is folded with the
 * live read model's evolve, so the labels compared are the ones the node read showed on either side of the event.
 */
export class AuditDiff {
  constructor(private readonly store: EventStore) {}

  async diff(from: number, to: number, maxChanges: number): Promise<ClusterDiff> {
    const nodes: AuditChange[] = [];
    const jobs: AuditChange[] = [];
    const events: RecordedEvent[] = [];
    let cursor = from;
    let through = to;
    while (cursor < to) {
      const page = await this.store.readFiltered({ types: TYPES }, { after: cursor, through: to, maxCount: PAGE });
      for (const e of page.events) {
        if (events.length === maxChanges) {
          through = events.at(-1)!.position;
          break;
        }
        events.push(e);
      }
      if (through < to) break;
      const reached = page.events.length === PAGE ? page.events.at(-1)!.position : page.scannedThrough;
      if (reached <= cursor) break;
      cursor = reached;
      await yieldToEventLoop();
    }
    const labels = await this.labelChanges(events.filter((e) => LABEL_EVENTS.has(e.type)));
    for (const e of events) {
      const change = auditChangeOf(e, labels.get(e.position));
      if (change === undefined) continue;
      (e.type.startsWith("Node") ? nodes : jobs).push(change);
    }
    return { nodes, jobs, through };
  }

  /** Each label event's effective labels before and after it, by position: each node's stream folded once. */
  private async labelChanges(events: readonly RecordedEvent[]): Promise<Map<number, LabelChange>> {
    const changes = new Map<number, LabelChange>();
    const wanted = new Set(events.map((e) => e.position));
    const nodeIds = new Set(events.map((e) => e.stream.slice("node-".length)));
    for (const nodeId of nodeIds) {
      const views = new NodeViews();
      for (const recorded of await this.store.readStream(nodeStream(nodeId))) {
        const before = views.get(nodeId);
        const labelsBefore = before === undefined ? {} : nodeLabels(before);
        views.handleEnvelope(new EventEnvelope(recorded));
        if (!wanted.has(recorded.position)) continue;
        const after = views.get(nodeId);
        changes.set(recorded.position, labelChange(labelsBefore, after === undefined ? {} : nodeLabels(after)));
      }
      await yieldToEventLoop();
    }
    return changes;
  }
}
