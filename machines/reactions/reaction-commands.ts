import type { EvictionPolicy, FleetHealth } from "./eviction-rule.ts";
import type { WaitingStanding } from "./reaction-events.ts";
import type { WaitingNode } from "./reactions-state.ts";

/** The node went silent: its work is moved at the eviction rate (eviction-rule.ts). */
export const QUEUE_NODE_LOSS = "QueueNodeLoss";
/** The node was rejected or deleted by an operator: its work is moved at once. */
export const LOSE_NODE_WORK = "LoseNodeWork";
/** The node is back: it is told to stop what was lost with it. */
export const STOP_LOST_WORK = "StopLostWork";
/** The node's labels changed: daemon executions of jobs it no longer matches are stopped. */
export const CHECK_DAEMON_MATCH = "CheckDaemonMatch";

/**
 * What the reactions are told. The node inputs carry what the node holds at that moment (asked of
 * the executions by the host); a look carries the fleet's health and where each waiting node stands.
 */
export type ReactionInput =
  | {
      readonly type: "NodeWentSilent";
      readonly nodeId: string;
      readonly health: "UNHEALTHY" | "UNKNOWN";
      readonly holdsWork: boolean;
    }
  | {
      readonly type: "NodeRemoved";
      readonly nodeId: string;
      readonly how: "rejected" | "deleted";
      readonly holdsWork: boolean;
    }
  | {
      readonly type: "NodeBack";
      readonly nodeId: string;
      readonly how: "approved" | "HEALTHY";
      readonly mayRunLostWork: boolean;
    }
  | { readonly type: "LabelsChanged"; readonly nodeId: string; readonly holdsDaemonWork: boolean }
  /** The periodic check found a node not HEALTHY that holds work; `recordId` names the record that queues it. */
  | {
      readonly type: "NodeFoundSilent";
      readonly nodeId: string;
      readonly health: string;
      readonly why: string;
      readonly recordId: string;
    }
  /** Nothing moves for silence until `until`. */
  | { readonly type: "HoldUntil"; readonly until: number }
  | {
      readonly type: "Look";
      readonly now: number;
      readonly transportDown: boolean;
      readonly policy: EvictionPolicy;
      readonly fleet: FleetHealth;
      /** Where each waiting node stands now (a node missing here is gone). */
      readonly standing: ReadonlyMap<string, WaitingStanding>;
    };

/** What the reactions ask the host to do. The first four are the workflow's recorded step commands. */
export type ReactionCommand =
  | {
      readonly type: typeof QUEUE_NODE_LOSS | typeof LOSE_NODE_WORK | typeof STOP_LOST_WORK | typeof CHECK_DAEMON_MATCH;
      readonly nodeId: string;
      readonly reason: string;
    }
  /** A waiting node's turn came and it is still silent: its executions are lost, as `became <health>`. */
  | {
      readonly type: "LoseSilentNodeWork";
      readonly nodeId: string;
      readonly health: WaitingStanding;
      readonly waiting: WaitingNode;
    };
