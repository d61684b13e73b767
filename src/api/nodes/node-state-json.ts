import type { LiveView } from "../../actors/node-manager.ts";
import type { NodeView } from "../../projections/node-view.ts";
import { lastHeartbeatOf, liveCapacityOf, toNodeState, type NodeState } from "./node-state.ts";

/**
 * Marks the live fields' places in a rendered NodeState. JSON.stringify writes a NUL as `\u0000`,
 * so a node's own strings could spell a mark too: a template is used only when each mark occurs
 * exactly once in its text (see templateOf).
 */
const MARKS = ["AvailableCapacity", "QueueCapacity", "RunningExecutions", "EnqueuedExecutions", "LastHeartbeat"].map(
  (name) => `\u0000shoal-live:${name}\u0000`,
);
const MARK_TEXTS = MARKS.map((mark) => JSON.stringify(mark));
const [AVAILABLE, QUEUE, RUNNING, ENQUEUED, BEAT] = MARKS as [string, string, string, string, string];

/** Before any render: matches no report. */
const UNSET = Symbol("unset");

/**
 * One view's NodeState JSON, cut where the live fields go: `parts` are the static text around
 * them (the four capacity fields, for compute nodes, then LastHeartbeat). The capacity fields
 * last rendered are remembered with it (JSON.stringify of two Resources is ≈ 1 µs, and a report
 * comes every ResourceUpdateInterval), so a page of nodes that have not reported since costs
 * only string joins and the heartbeats' times.
 */
interface Template {
  /** The node's own text: ids, host name, labels (the start of the first part). */
  readonly head: string;
  /** After `head`: the rest of the first part (one of a few in a fleet), then the others. */
  readonly parts: readonly string[];
  readonly compute: boolean;
  /** Every character of `parts` is ASCII (JSON.stringify leaves other characters unescaped). */
  readonly ascii: boolean;
  /** Which report capacityText was made from: its resourcesVersion, or the report itself without one. */
  report: unknown;
  /** The capacity fields and the static text between them, for `report`. */
  capacityText: string;
  capacityAscii: boolean;
}

/** Any UTF-16 code unit past ASCII (lone surrogates too). */
const NOT_ASCII = /[\u0080-\uffff]/;

/**
 * Texts that many nodes share, kept once: what lies between the capacity fields and around
 * LastHeartbeat, and a node's info from BacalhauVersion on (version, engines, capacities: a
 * fleet has few kinds). Bounded; past the bound a text is simply not shared.
 */
const interned = new Map<string, string>();
const MAX_INTERNED = 4096;
function intern(text: string): string {
  const known = interned.get(text);
  if (known !== undefined) return known;
  if (interned.size < MAX_INTERNED) interned.set(text, text);
  return text;
}

/**
 * JSON.stringify(new Date(ms).toISOString()) for a heartbeat time, ≈ 15 × cheaper: the times of
 * one second share everything but their milliseconds, so each second is formatted once (the
 * last 64 seconds are kept; a page's heartbeats span a few intervals).
 */
const SECONDS = 64;
const secondOf = new Float64Array(SECONDS).fill(Number.NaN);
const secondText: string[] = new Array<string>(SECONDS).fill("");
/** Dates reach ±8.64e15 ms; past that toISOString throws, and must throw here too. */
const MAX_DATE_MS = 8.64e15;
function isoJson(ms: number): string {
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > MAX_DATE_MS) return JSON.stringify(new Date(ms).toISOString());
  const second = Math.floor(ms / 1000);
  const slot = ((second % SECONDS) + SECONDS) % SECONDS;
  if (secondOf[slot] !== second) {
    // "…T12:34:56." of "…T12:34:56.000Z" (also in the ±YYYYYY form).
    secondText[slot] = `"${new Date(second * 1000).toISOString().slice(0, -4)}`;
    secondOf[slot] = second;
  }
  const milli = ms - second * 1000;
  return `${secondText[slot] as string}${milli < 10 ? "00" : milli < 100 ? "0" : ""}${milli}Z"`;
}

/** A node whose own strings spell a mark: rendered whole each time (never seen from a real node). */
const WHOLE = "whole" as const;

/**
 * The list's NodeState JSON, byte for byte what JSON.stringify(toNodeState(view, live)) writes,
 * from text kept per view: a view is immutable and replaced on every change, so its template is
 * built once, on its first render, and dropped with it (a WeakMap: no deleted node's text is
 * kept). Per render only the live fields, those that move without an event (resource reports
 * and heartbeats), are spliced in. test/unit/projections/node-index.test.ts holds it to the object path.
 */
export class NodeStateJson {
  private readonly templates = new WeakMap<NodeView, Template | typeof WHOLE>();
  /** Every text rendered since the last listBody was ASCII. */
  private ascii = true;

  /**
   * The list's body, as JSON.stringify({ Nodes, NextToken }) of the NodeStates writes it. As
   * bytes when every character is ASCII: latin1 then copies the string, where utf8 (Fastify's
   * byte length and the socket's write of a string) encodes it character by character, three
   * times the cost of building the page.
   */
  listBody(
    views: readonly NodeView[],
    liveOf: (view: NodeView) => LiveView | undefined,
    nextToken: string,
    underWayOf?: (nodeId: string) => number,
  ): string | Buffer {
    this.ascii = true;
    let body = '{"Nodes":[';
    for (let i = 0; i < views.length; i++) {
      const view = views[i] as NodeView;
      const underWay = view.drain?.status === "draining" ? underWayOf?.(view.nodeId) : undefined;
      const text = this.render(view, liveOf(view), underWay);
      body += i === 0 ? text : `,${text}`;
    }
    // A NextToken is base64url.
    body += `],"NextToken":${JSON.stringify(nextToken)}}`;
    return this.ascii && !NOT_ASCII.test(nextToken) ? Buffer.from(body, "latin1") : body;
  }

  /**
   * One node's NodeState JSON: JSON.stringify(toNodeState(view, live, underWay)). A draining node's count of executions
   * under way moves without an event, so such a node (a few at a time) is rendered whole.
   */
  render(view: NodeView, live: LiveView | undefined, underWay?: number): string {
    let template = underWay === undefined ? this.templates.get(view) : WHOLE;
    if (template === undefined) {
      template = templateOf(view);
      this.templates.set(view, template);
    }
    if (template === WHOLE) {
      const text = JSON.stringify(toNodeState(view, live, underWay));
      this.ascii &&= !NOT_ASCII.test(text);
      return text;
    }
    const parts = template.parts;
    const heartbeat = live?.lastHeartbeat;
    let beat: string;
    if (typeof heartbeat === "number") beat = isoJson(heartbeat);
    else {
      beat = JSON.stringify(lastHeartbeatOf(view, live));
      this.ascii &&= !NOT_ASCII.test(beat);
    }
    this.ascii &&= template.ascii;
    if (!template.compute) return template.head + (parts[0] as string) + beat + (parts[1] as string);
    const report = live?.resources;
    const reportKey = live?.resourcesVersion ?? report;
    if (template.report !== reportKey) {
      const c = liveCapacityOf(report);
      // Joined, not added: one flat string is smaller than a rope of seven.
      template.capacityText = [
        JSON.stringify(c.AvailableCapacity),
        parts[1],
        JSON.stringify(c.QueueCapacity),
        parts[2],
        JSON.stringify(c.RunningExecutions),
        parts[3],
        JSON.stringify(c.EnqueuedExecutions),
      ].join("");
      template.capacityAscii = !NOT_ASCII.test(template.capacityText);
      template.report = reportKey;
    }
    this.ascii &&= template.capacityAscii;
    return (
      template.head + (parts[0] as string) + template.capacityText + (parts[4] as string) + beat + (parts[5] as string)
    );
  }
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
      ? {
          ...state.Info,
          ComputeNodeInfo: {
            ...compute,
            AvailableCapacity: AVAILABLE,
            QueueCapacity: QUEUE,
            RunningExecutions: RUNNING,
            EnqueuedExecutions: ENQUEUED,
          },
        }
      : state.Info,
    ConnectionState: { ...state.ConnectionState, LastHeartbeat: BEAT },
  } satisfies Record<Exclude<keyof NodeState, "Cordon" | "Drain">, unknown> & Pick<NodeState, "Drain">;
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
  const ascii = !NOT_ASCII.test(text);
  // The first part splits where the node's own strings end: the last `,"BacalhauVersion":` key
  // (a label may be named so too, but nothing after the real one can). Any split is correct;
  // this one makes the rest shareable.
  const first = parts[0] as string;
  const cut = first.lastIndexOf(',"BacalhauVersion":');
  const head = cut > 0 ? first.slice(0, cut) : first;
  parts[0] = cut > 0 ? intern(first.slice(cut)) : "";
  // Every part but the last is one of a few texts.
  for (let i = 1; i < parts.length - 1; i++) parts[i] = intern(parts[i] as string);
  // The node's own text is copied out, so the whole rendered text is not kept for its sake.
  const last = parts.length - 1;
  parts[last] = ascii ? copyOf(parts[last] as string) : (parts[last] as string);
  return {
    head: ascii ? copyOf(head) : head,
    parts,
    compute: compute !== undefined,
    ascii,
    report: UNSET,
    capacityText: "",
    capacityAscii: true,
  };
}

/** A flat copy of an ASCII string (a slice would keep the string it was cut from). */
const copyOf = (text: string): string => Buffer.from(text, "latin1").toString("latin1");
