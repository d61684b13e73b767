import type { NodeState } from "../api/nodes/node-state.ts";
import type { ClusterEvent } from "../projections/cluster-event.ts";
import { mayPass, type ApiClient } from "./api-client.ts";
import { followEvents } from "./follow-events.ts";
import { elapsed } from "./job-cells.ts";
import { localTime, timeOnly } from "./local-time.ts";
import { printable } from "./printable.ts";

/** How `node drain --monitor` and `--wait` say how the drain ended (2 is a usage error, as everywhere). */
export const DRAIN_EXIT = { drained: 0, error: 1, expired: 3, undrained: 4, interrupted: 130 } as const;

/** The drain's automatic actions (drain-flow.ts's DRAIN_ACTOR), which the monitor prints as they are stored. */
const DRAIN_ACTOR = "workflow:node-drain";
const POLL_MS = 1000;
/** How long the end waits for the stream to show the event that ended the drain. */
const END_EVENT_WAIT_MS = 3000;
/** The drain workflow's events that end a drain (an undrain is an operator's: not in the stream asked for). */
const ENDING_EVENTS: ReadonlySet<string> = new Set(["NodeDrainCompleted", "NodeDrainDeadlineReached"]);
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Off a terminal the status is a line of its own: printed when what is left changes, else this often. */
const STATUS_EVERY_MS = 30_000;
const CLEAR_LINE = "\r\u001b[K";

export interface DrainFollowOptions {
  /** monitor: print the drain's progress to its end; wait: print nothing, only the exit status says how it ended. */
  readonly mode: "monitor" | "wait";
  /** Where the monitor prints (stdout; a stand-in in tests). */
  readonly out?: { readonly isTTY?: boolean; write(text: string): unknown };
}

const executions = (n: number) => `${n} ${n === 1 ? "execution" : "executions"}`;
const why = (reason: string) => (reason === "" ? "" : ` (${reason})`);
const nodePath = (id: string) => `/api/v1/orchestrator/nodes/${encodeURIComponent(id)}`;

/**
 * What the drain still has to see end: the executions the orchestrator counts as under way on the node (what the drain
 * decides from), else, from a server without that count, what the node said in its last resource report.
 */
function leftText(node: NodeState): string {
  const left = node.Drain?.ExecutionsLeft;
  if (left !== undefined) return `${executions(left)} under way on the node, as the orchestrator counts`;
  const c = node.Info.ComputeNodeInfo;
  if (c === undefined) return "the node has reported no executions";
  const queued = c.EnqueuedExecutions > 0 ? `, ${c.EnqueuedExecutions} queued` : "";
  return `${executions(c.RunningExecutions)} running on the node${queued}, as it last reported`;
}

/** Whether a stored event is this drain's doing: the node's own, or an action of the drain naming the node. */
function isAbout(event: ClusterEvent, nodeId: string): boolean {
  if (event.stream === `node-${nodeId}`) return true;
  const reason = String(event.metadata.reason ?? "");
  const at = reason.indexOf(`node ${nodeId}`);
  // `node n-1` must not match a reason about node n-10.
  return at >= 0 && !/[A-Za-z0-9_.-]/.test(reason.charAt(at + nodeId.length + 5));
}

function eventLine(event: ClusterEvent): string {
  const entity = event.stream.slice(event.stream.indexOf("-") + 1);
  const reason = event.metadata.reason === undefined ? "" : `: ${String(event.metadata.reason)}`;
  return `${event.type} ${entity}${reason}`;
}

/**
 * Follows a node's drain to its end, as Nomad's `node drain -monitor` does: the deadline's countdown and what is left
 * on the node (each second, in place on a terminal; off one, when it changes), each action of the drain as it is
 * stored (the cluster's event stream, which needs read:history; without it the countdown alone), and how it ended.
 * The end is the node's own state (its Drain), read each second: drained (exit 0), its deadline reached with work
 * left, which was stopped (3), or ended by an undrain before it completed (4). Ctrl-C stops following, not the drain.
 */
export async function followDrain(api: ApiClient, id: string, options: DrainFollowOptions): Promise<number> {
  const out = options.out ?? process.stdout;
  const monitor = options.mode === "monitor";
  const tty = monitor && out.isTTY === true;
  let status = "";
  const line = (text: string) => {
    if (!monitor) return;
    out.write(`${tty && status !== "" ? CLEAR_LINE : ""}${timeOnly(new Date())}  ${printable(text)}\n`);
    if (tty && status !== "") out.write(status);
  };
  const stop = new AbortController();
  const interrupted = () => {
    stop.abort();
    if (monitor) out.write(`${tty ? CLEAR_LINE : ""}Monitoring stopped; the drain goes on.\n`);
    process.exit(DRAIN_EXIT.interrupted);
  };
  process.once("SIGINT", interrupted);
  let wake: (() => void) | undefined;
  let following: Promise<void> = Promise.resolve();
  // Settles once the stream has shown how the drain ended (or cannot show it): the story is printed whole.
  let endShown: () => void = () => undefined;
  const shown = new Promise<void>((resolve) => (endShown = resolve));
  try {
    let node = (await api.request<{ Node: NodeState }>("GET", nodePath(id))).Node;
    const nodeId = node.Info.NodeID;
    if (monitor) {
      line(`Ctrl-C stops monitoring; the drain goes on`);
      following = followDrainEvents(api, node, stop.signal, line, {
        changed: () => wake?.(),
        ended: endShown,
      });
    }
    let lastLeft = "";
    let lastPrinted = 0;
    for (;;) {
      const drain = node.Drain;
      if (drain?.Status !== "draining") {
        if (tty && status !== "") out.write(CLEAR_LINE);
        status = "";
        // The drain's own end (not an operator's undrain, which the stream does not carry) may still be on its way.
        if (monitor && drain !== undefined) await Promise.race([shown, delay(END_EVENT_WAIT_MS)]);
        return ended(node, line, options.mode);
      }
      const left = leftText(node);
      const text = `${left}; deadline in ${elapsed(new Date(), new Date(drain.Deadline))} (${localTime(new Date(drain.Deadline))})`;
      if (tty) {
        status = `${timeOnly(new Date())}  ${printable(text)}`;
        out.write(`${CLEAR_LINE}${status}`);
      } else if (monitor && (left !== lastLeft || Date.now() - lastPrinted >= STATUS_EVERY_MS)) {
        line(text);
        lastPrinted = Date.now();
      }
      lastLeft = left;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      try {
        node = (await api.request<{ Node: NodeState }>("GET", nodePath(nodeId))).Node;
      } catch (e) {
        // The orchestrator restarting: the drain goes on there, and so does this, once it answers again.
        if (!mayPass(e)) throw e;
        line(`the API does not answer (${e.message}); trying again`);
      }
    }
  } finally {
    stop.abort();
    process.off("SIGINT", interrupted);
    await following;
  }
}

function ended(node: NodeState, line: (text: string) => void, mode: DrainFollowOptions["mode"]): number {
  const id = node.Info.NodeID;
  const drain = node.Drain;
  const say = (text: string, code: number) => {
    if (mode === "monitor") line(text);
    else if (code !== DRAIN_EXIT.drained) process.stderr.write(`Error: ${printable(text)}\n`);
    return code;
  };
  if (drain === undefined)
    return say(`the drain of node ${id} was ended (undrained) before it completed`, DRAIN_EXIT.undrained);
  if (drain.Status === "expired")
    return say(
      `node ${id}: the drain's deadline passed with ${executions(drain.Left ?? 0)} left, which were stopped`,
      DRAIN_EXIT.expired,
    );
  return say(`node ${id} drained: nothing the drain had to move is left`, DRAIN_EXIT.drained);
}

/** How far back in the node's history the drain's start is looked for (a drain started just now is the last). */
const HISTORY_LOOK_BACK = 20;

/**
 * Prints each action of the drain as it is stored, from the drain's start on (the stream resumes after the
 * NodeDrainStarted's position, so nothing done before it opened is missed). A caller without read:history is told the
 * monitor shows the countdown alone; nothing here ends the monitor (the node's state does).
 */
async function followDrainEvents(
  api: ApiClient,
  node: NodeState,
  signal: AbortSignal,
  line: (text: string) => void,
  on: { readonly changed: () => void; readonly ended: () => void },
): Promise<void> {
  const nodeId = node.Info.NodeID;
  const query = new URLSearchParams({ category: "node,execution,job", actor: DRAIN_ACTOR });
  try {
    const from = Math.max(0, node.Revision - HISTORY_LOOK_BACK + 1);
    const { Items } = await api.request<{ Items: ClusterEvent[] }>(
      "GET",
      `${nodePath(nodeId)}/history?next_token=${from}&limit=${HISTORY_LOOK_BACK}`,
    );
    const started = Items.findLast((e) => e.type === "NodeDrainStarted");
    await followEvents(api, {
      query,
      after: started?.position,
      onEvent: (data) => {
        const event = JSON.parse(data) as ClusterEvent;
        if (!isAbout(event, nodeId)) return;
        line(eventLine(event));
        on.changed();
        if (ENDING_EVENTS.has(event.type)) on.ended();
      },
      signal,
      note: () => undefined,
    });
  } catch (e) {
    on.ended();
    line(
      `the drain's actions are not shown (${(e as Error).message}): they come from the node's history and the ` +
        "event stream, which need the read:history capability",
    );
  }
}

/**
 * `node drain ID --monitor|--wait`: the drain is started (the PUT as without them), then followed to its end. A node
 * with a drain already (under way, or ended and not undrained), given no --deadline or --keep-daemon, has that drain
 * followed as it is (Nomad's `-monitor` alone): draining it again would replace its deadline with the default hour.
 */
export async function drainAndFollow(
  api: ApiClient,
  id: string,
  body: Readonly<Record<string, unknown>>,
  options: DrainFollowOptions,
): Promise<number> {
  const out = options.out ?? process.stdout;
  const changes = "Deadline" in body || "KeepDaemon" in body;
  const { Node: node } = await api.request<{ Node: NodeState }>("GET", nodePath(id));
  if (!changes && node.Drain !== undefined) {
    if (options.mode === "monitor")
      out.write(
        `${printable(`Following the drain of ${node.Info.NodeID} started ${localTime(new Date(node.Drain.StartedAt))}${why(node.Drain.Reason)}`)}\n`,
      );
  } else {
    const res = await api.request<{ Message?: string }>("PUT", nodePath(id), body);
    if (options.mode === "monitor" && res?.Message !== undefined) out.write(`${printable(res.Message)}\n`);
  }
  return followDrain(api, id, options);
}
