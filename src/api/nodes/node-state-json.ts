import type { LiveView } from "../../actors/node-manager.ts";
import type { ResourceReport } from "../../events/catalog/node-info.ts";
import type { NodeView } from "../../projections/node-view.ts";
import { lastHeartbeatOf, liveCapacityOf, toNodeState, type NodeState } from "./node-state.ts";

/**
 * Marks the live fields' places in a rendered NodeState. JSON.stringify writes a NUL as `\u0000`,
 * so a node's own strings could spell a mark too: a template is used only when each mark occurs
 * exactly once in its text (see templateOf).
 */
const MARKS = ["AvailableCapacity", "QueueCapacity", "RunningExecutions", "EnqueuedExecutions", "LastHeartbeat"].map((name) => `\u0000shoal-live:${name}\u0000`);
const MARK_TEXTS = MARKS.map((mark) => JSON.stringify(mark));
const [AVAILABLE, QUEUE, RUNNING, ENQUEUED, BEAT] = MARKS as [string, string, string, string, string];

/** Before any render: matches no report and no heartbeat. */
const UNSET = Symbol("unset");

/**
 * One view's NodeState JSON, cut where the live fields go: `parts` are the static text around
 * them (the four capacity fields, for compute nodes, then LastHeartbeat). The last live values
 * rendered are remembered with it, so a page of nodes that have not reported since costs only
 * string joins.
 */
interface Template {
  readonly parts: readonly string[];
  readonly compute: boolean;
  report: ResourceReport | undefined | typeof UNSET;
  /** The capacity fields and the static text between them, for `report`. */
  capacityText: string;
  beat: number | null | undefined | typeof UNSET;
  beatText: string;
}

/** A node whose own strings spell a mark: rendered whole each time (never seen from a real node). */
const WHOLE = "whole" as const;

/**
 * The list's NodeState JSON, byte for byte what JSON.stringify(toNodeState(view, live)) writes,
 * from text kept per view: a view is immutable and replaced on every change, so its template is
 * built once, on its first render, and dropped with it (a WeakMap: no deleted node's text is
 * kept). Per render only the live fields, those that move without an event (resource reports
 * and heartbeats), are spliced in. test/unit/api/node-state-json.test.ts holds it to the object path.
 */
export class NodeStateJson {
  private readonly templates = new WeakMap<NodeView, Template | typeof WHOLE>();

  render(view: NodeView, live: LiveView | undefined): string {
    let template = this.templates.get(view);
    if (template === undefined) {
      template = templateOf(view);
      this.templates.set(view, template);
    }
    if (template === WHOLE) return JSON.stringify(toNodeState(view, live));
    const parts = template.parts;
    const heartbeat = live?.lastHeartbeat;
    if (template.beat !== heartbeat) {
      template.beatText = JSON.stringify(lastHeartbeatOf(view, live));
      template.beat = heartbeat;
    }
    if (!template.compute) return (parts[0] as string) + template.beatText + (parts[1] as string);
    const report = live?.resources;
    if (template.report !== report) {
      const c = liveCapacityOf(report);
      template.capacityText =
        JSON.stringify(c.AvailableCapacity) +
        (parts[1] as string) +
        JSON.stringify(c.QueueCapacity) +
        (parts[2] as string) +
        JSON.stringify(c.RunningExecutions) +
        (parts[3] as string) +
        JSON.stringify(c.EnqueuedExecutions);
      template.report = report;
    }
    return (parts[0] as string) + template.capacityText + (parts[4] as string) + template.beatText + (parts[5] as string);
  }
}

/** The list's body, as JSON.stringify({ Nodes, NextToken }) writes it, from rendered nodes. */
export function nodeListJson(nodes: readonly string[], nextToken: string): string {
  let body = '{"Nodes":[';
  for (let i = 0; i < nodes.length; i++) body += i === 0 ? (nodes[i] as string) : `,${nodes[i] as string}`;
  return `${body}],"NextToken":${JSON.stringify(nextToken)}}`;
}

/**
 * Renders the view through toNodeState itself with a mark in each live field (spreads keep
 * every key where it was), then cuts the text at the marks: whatever toNodeState writes, and
 * in whatever order, the template writes too.
 */
function templateOf(view: NodeView): Template | typeof WHOLE {
  const state = toNodeState(view, undefined);
  const compute = state.Info.ComputeNodeInfo;
  const marked = {
    ...state,
    Info: compute
      ? { ...state.Info, ComputeNodeInfo: { ...compute, AvailableCapacity: AVAILABLE, QueueCapacity: QUEUE, RunningExecutions: RUNNING, EnqueuedExecutions: ENQUEUED } }
      : state.Info,
    ConnectionState: { ...state.ConnectionState, LastHeartbeat: BEAT },
  } satisfies Record<keyof NodeState, unknown>;
  const text = JSON.stringify(marked);
  const marks = compute ? MARK_TEXTS : MARK_TEXTS.slice(4);
  const parts: string[] = [];
  let from = 0;
  for (const mark of marks) {
    const at = text.indexOf(mark);
    if (at < from || text.indexOf(mark, at + 1) !== -1) return WHOLE;
    parts.push(text.slice(from, at));
    from = at + mark.length;
  }
  parts.push(text.slice(from));
  return { parts, compute: compute !== undefined, report: UNSET, capacityText: "", beat: UNSET, beatText: "" };
}
