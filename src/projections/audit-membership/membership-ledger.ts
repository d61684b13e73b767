import { evolveNode } from "../../../machines/node/evolve-node.ts";
import { initialNodeState, type NodeState } from "../../../machines/node/node-state.ts";
import type { NodeEvent } from "../../events/catalog/node-events.ts";
import type { Health } from "../../events/catalog/node-info.ts";

/** The node events that move a node's membership or health: all a membership audit reads. */
export const MEMBERSHIP_EVENT_TYPES = [
  "NodeRegistered",
  "NodeApproved",
  "NodeRejected",
  "NodeDeleted",
  "NodeBecameHealthy",
  "NodeBecameUnhealthy",
  "NodeBecameUnknown",
] as const;
const MEMBERSHIP_CHANGES: ReadonlySet<string> = new Set([
  "NodeRegistered",
  "NodeApproved",
  "NodeRejected",
  "NodeDeleted",
]);

/** Epoch ms, both inclusive; since < until. */
export interface MembershipWindow {
  readonly since: number;
  readonly until: number;
}

export type AuditedMembership = "PENDING" | "APPROVED" | "REJECTED" | "DELETED";

export interface MembershipChange {
  readonly Time: string;
  readonly Event: string;
  readonly Membership: AuditedMembership;
  /** `type:id` of who caused it, as the feed names actors. */
  readonly By: string;
  readonly Reason: string;
}

export interface NodeMembershipAudit {
  readonly NodeID: string;
  /** Its first join request (the first NodeRegistered of its stream), wherever it lies; null: none up to `until`. */
  readonly Joined: string | null;
  /** At the end of the window (DELETED: deleted and not back by then); null: it had not joined by then. */
  readonly Membership: AuditedMembership | null;
  /** Who made the latest membership change up to the end of the window, and why ("" when none). */
  readonly By: string;
  readonly Reason: string;
  /** The membership changes inside the window, in order. */
  readonly Changes: readonly MembershipChange[];
  /** Milliseconds the node spent in each health state inside the window while it was registered. */
  readonly HealthyMs: number;
  readonly UnhealthyMs: number;
  readonly UnknownMs: number;
}

/** Who caused an event and why, from its metadata. */
export interface EventCause {
  readonly actor: { readonly type: string; readonly id: string } | undefined;
  readonly reason: string | undefined;
}

interface Tally {
  state: NodeState;
  /** Up to where (epoch ms) its health time was counted; never before since nor after until. */
  counted: number;
  joined: string | null;
  latest: MembershipChange | undefined;
  changes: MembershipChange[];
  inWindow: boolean;
  ms: Record<Health, number>;
}

const membershipOf = (state: NodeState): AuditedMembership | null =>
  state.deleted ? "DELETED" : state.registered ? (state.membership ?? null) : null;

/**
 * Per node, its membership history and the time it spent HEALTHY, UNHEALTHY and UNKNOWN inside a window, folded
 * from its membership and health events with the node's own evolve (the chart decides what each event does). Feed
 * each node's events in its stream's order, from its beginning; events later than the window's end change nothing.
 * Time before a node's first event in the window is counted in the state the earlier events left it in; time after
 * its last one, up to the end. A deleted node counts nothing until it registers again.
 */
export class MembershipLedger {
  private readonly nodes = new Map<string, Tally>();

  constructor(private readonly window: MembershipWindow) {}

  add(nodeId: string, event: NodeEvent, time: string, cause: EventCause): void {
    const at = Date.parse(time);
    if (!(at <= this.window.until)) return;
    const tally = this.tally(nodeId);
    this.count(tally, at);
    const before = tally.state;
    tally.state = evolveNode(before, event, time);
    if (at >= this.window.since) tally.inWindow = true;
    if (tally.state === before || !MEMBERSHIP_CHANGES.has(event.type)) return;
    if (event.type === "NodeRegistered" && tally.joined === null) tally.joined = time;
    const by = cause.actor === undefined ? "" : `${cause.actor.type}:${cause.actor.id}`;
    const change = {
      Time: time,
      Event: event.type,
      Membership: membershipOf(tally.state)!,
      By: by,
      Reason: cause.reason ?? "",
    };
    tally.latest = change;
    if (at >= this.window.since) tally.changes.push(change);
  }

  /** A node asked for by name: listed even when it had nothing in the window. */
  include(nodeId: string): void {
    this.tally(nodeId).inWindow = true;
  }

  /** Every node registered at some moment of the window (or included), by id. */
  audits(): NodeMembershipAudit[] {
    const out: NodeMembershipAudit[] = [];
    for (const [nodeId, tally] of [...this.nodes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      this.count(tally, this.window.until);
      const ms = tally.ms;
      if (!tally.inWindow && ms.HEALTHY + ms.UNHEALTHY + ms.UNKNOWN === 0) continue;
      out.push({
        NodeID: nodeId,
        Joined: tally.joined,
        Membership: membershipOf(tally.state),
        By: tally.latest?.By ?? "",
        Reason: tally.latest?.Reason ?? "",
        Changes: tally.changes,
        HealthyMs: ms.HEALTHY,
        UnhealthyMs: ms.UNHEALTHY,
        UnknownMs: ms.UNKNOWN,
      });
    }
    return out;
  }

  private tally(nodeId: string): Tally {
    let tally = this.nodes.get(nodeId);
    if (tally === undefined) {
      tally = {
        state: initialNodeState(nodeId),
        counted: this.window.since,
        joined: null,
        latest: undefined,
        changes: [],
        inWindow: false,
        ms: { HEALTHY: 0, UNHEALTHY: 0, UNKNOWN: 0 },
      };
      this.nodes.set(nodeId, tally);
    }
    return tally;
  }

  /** Counts the time from where the node was counted up to `at` (clipped to the window) in its present health. */
  private count(tally: Tally, at: number): void {
    const to = Math.min(Math.max(at, this.window.since), this.window.until);
    if (to <= tally.counted) return;
    const { state } = tally;
    if (state.registered && !state.deleted && state.health !== undefined) tally.ms[state.health] += to - tally.counted;
    tally.counted = to;
  }
}
