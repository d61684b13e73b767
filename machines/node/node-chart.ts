import { setup, type StateValue } from "xstate";
import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import type { Health, Membership } from "../../src/events/catalog/node-info.ts";
import { compileChart } from "../compile-chart.ts";
import type { NodeState } from "./node-state.ts";

/** Taken, and the state stays: the event changes the node's data only (evolveNode folds it). */
const DATA = { actions: "foldData" } as const;

/**
 * A node's statechart: its events are its transitions. A registered node's membership (the
 * operator's verdict) and health (its heartbeats) change independently, so they are parallel
 * regions; every lifecycle starts healthy. `decideNode` asks it whether the event a command
 * causes may happen now; `evolveNode` takes the next state from it. Cordons, labels, drains and
 * credentials are the node's data: taken in any registered state, they move none of its states.
 */
export const nodeChart = setup({
  types: { events: {} as NodeEvent },
  guards: {
    // Let in on registration (automatic approval, the orchestrator itself, a pre-authorisation).
    registersApproved: ({ event }) => event.type === "NodeRegistered" && event.data.Membership === "APPROVED",
  },
  actions: { foldData: () => undefined },
}).createMachine({
  id: "node",
  initial: "absent",
  states: {
    // Never registered, or deleted: an operator may pre-authorise the node id meanwhile.
    absent: {
      on: {
        NodeRegistered: [
          { guard: "registersApproved", target: "registered.membership.approved" },
          { target: "registered" },
        ],
        NodePreauthorized: DATA,
        NodePreauthorizationRevoked: DATA,
      },
    },
    registered: {
      type: "parallel",
      on: {
        NodeDeleted: { target: "absent" },
        NodeCredentialBound: DATA,
        NodeCredentialRevoked: DATA,
        NodeCordoned: DATA,
        NodeUncordoned: DATA,
        NodeLabelsSet: DATA,
        NodePreauthorizationRevoked: DATA,
        NodeDrainStarted: DATA,
        NodeDrainCompleted: DATA,
        NodeDrainDeadlineReached: DATA,
        NodeUndrained: DATA,
      },
      states: {
        membership: {
          initial: "pending",
          states: {
            pending: {
              on: { NodeApproved: { target: "approved" }, NodeRejected: { target: "rejected" }, NodeInfoUpdated: DATA },
            },
            approved: { on: { NodeRejected: { target: "rejected" }, NodeInfoUpdated: DATA } },
            // A rejected node may not re-register nor report until an operator approves it.
            rejected: { on: { NodeApproved: { target: "approved" } } },
          },
        },
        health: {
          initial: "healthy",
          states: {
            healthy: { on: { NodeBecameUnhealthy: { target: "unhealthy" } } },
            unhealthy: { on: { NodeBecameUnknown: { target: "unknown" }, NodeBecameHealthy: { target: "healthy" } } },
            unknown: { on: { NodeBecameHealthy: { target: "healthy" } } },
          },
        },
      },
    },
  },
});

/** The fields of a NodeState the chart decides. Absent leaves the last membership and health as history. */
export interface NodeChartState {
  readonly registered: boolean;
  readonly membership: Membership | undefined;
  readonly health: Health | undefined;
}

// The catalog's own literals, not strings made from the chart's keys: the fold compares and looks these up per event.
const MEMBERSHIP: Readonly<Record<string, Membership>> = {
  pending: "PENDING",
  approved: "APPROVED",
  rejected: "REJECTED",
};
const HEALTH: Readonly<Record<string, Health>> = { healthy: "HEALTHY", unhealthy: "UNHEALTHY", unknown: "UNKNOWN" };

function project(value: StateValue): NodeChartState {
  if (typeof value === "string") return { registered: false, membership: undefined, health: undefined };
  const regions = value["registered"] as { membership: string; health: string };
  const membership = MEMBERSHIP[regions.membership];
  const health = HEALTH[regions.health];
  if (membership === undefined || health === undefined)
    throw new Error(`node chart: no such state ${JSON.stringify(value)}`);
  return { registered: true, membership, health };
}

/** The node chart as a table, for the fold (bench/restart.ts replays hundreds of thousands of node events). */
export const nodeTransitions = compileChart<NodeChartState, NodeState, NodeEvent, "NodeRegistered">(
  nodeChart,
  project,
  {},
  ["NodeRegistered"],
);

const ABSENT = nodeTransitions.indexOf("absent");
const REGISTERED: Readonly<Record<string, number>> = Object.fromEntries(
  nodeTransitions.targets.flatMap((t, i) => (t.registered ? [[`${t.membership}|${t.health}`, i]] : [])),
);
const BY_MEMBERSHIP: Readonly<Record<Membership, Readonly<Record<Health, number>>>> = {
  PENDING: { HEALTHY: 0, UNHEALTHY: 0, UNKNOWN: 0 },
  APPROVED: { HEALTHY: 0, UNHEALTHY: 0, UNKNOWN: 0 },
  REJECTED: { HEALTHY: 0, UNHEALTHY: 0, UNKNOWN: 0 },
};
for (const m of Object.keys(BY_MEMBERSHIP) as Membership[])
  for (const h of Object.keys(BY_MEMBERSHIP[m]) as Health[])
    (BY_MEMBERSHIP[m] as Record<Health, number>)[h] = REGISTERED[`${m}|${h}`]!;

/** Where a node is in its chart (the index `nodeTransitions` takes). */
export function nodeChartIndex(state: NodeState): number {
  return state.registered ? BY_MEMBERSHIP[state.membership ?? "PENDING"][state.health ?? "HEALTHY"] : ABSENT;
}
