import { setup, type StateValue } from "xstate";
import type { NodeType } from "../../src/events/catalog/node-info.ts";
import type { NodeCommand } from "./node-commands.ts";
import type { NodeState } from "./node-state.ts";

type CommandType = NodeCommand["type"];

const LEGAL = { actions: "legal" } as const;
const UNLESS_ORCHESTRATOR = { guard: "notTheOrchestrator", actions: "legal" } as const;

/**
 * Which command a node accepts in which state: the legality table of every node command, as a
 * statechart. Transitions carry no target: what a command changes is decided by `decideNode`
 * and folded by `evolveNode`; this says only whether it may happen at all. The statechart's
 * states are the ones `nodeStateValue` reads off a NodeState.
 */
export const nodeLegality = setup({
  types: {
    context: {} as { nodeType: NodeType | undefined },
    events: {} as { type: CommandType },
  },
  guards: {
    notTheOrchestrator: ({ context }) => context.nodeType !== "Requester",
  },
  // xstate's `can` counts only transitions that do something; this one marks a command legal.
  actions: { legal: () => undefined },
}).createMachine({
  id: "node",
  context: { nodeType: undefined },
  initial: "absent",
  states: {
    // An operator may pre-authorise a node id before it exists (or after a delete).
    absent: { on: { Register: LEGAL, Preauthorize: LEGAL, RevokePreauthorization: LEGAL } },
    registered: {
      type: "parallel",
      // Cordon, labels and drain concern compute nodes only: the orchestrator takes no placements and
      // has no work to move. A drain's own conditions (already draining, not drained) are decideNode's.
      on: {
        Delete: UNLESS_ORCHESTRATOR,
        Cordon: UNLESS_ORCHESTRATOR,
        Uncordon: UNLESS_ORCHESTRATOR,
        SetLabels: UNLESS_ORCHESTRATOR,
        RevokePreauthorization: LEGAL,
        Drain: UNLESS_ORCHESTRATOR,
        Undrain: LEGAL,
        CompleteDrain: LEGAL,
        ExpireDrain: LEGAL,
      },
      states: {
        membership: {
          initial: "pending",
          states: {
            pending: { on: { Register: LEGAL, UpdateInfo: LEGAL, Approve: LEGAL, Reject: UNLESS_ORCHESTRATOR } },
            approved: { on: { Register: LEGAL, UpdateInfo: LEGAL, Reject: UNLESS_ORCHESTRATOR } },
            // A rejected node may not re-register nor report until an operator approves it.
            rejected: { on: { Approve: LEGAL } },
          },
        },
        health: {
          initial: "healthy",
          states: {
            healthy: { on: { MarkUnhealthy: LEGAL } },
            unhealthy: { on: { MarkUnknown: LEGAL, MarkHealthy: LEGAL } },
            unknown: { on: { MarkHealthy: LEGAL } },
          },
        },
      },
    },
  },
});

export function nodeStateValue(state: NodeState): StateValue {
  if (!state.registered) return "absent";
  return {
    registered: {
      membership: (state.membership ?? "PENDING").toLowerCase(),
      health: (state.health ?? "HEALTHY").toLowerCase(),
    },
  };
}

// Legality depends only on (state value, node type, command type): a few dozen combinations,
// each resolved through the statechart once.
const table = new Map<string, boolean>();

/** May this node accept a command of this type now? */
export function isLegal(state: NodeState, command: CommandType): boolean {
  const key = state.registered
    ? `${state.membership}|${state.health}|${state.nodeType}|${command}`
    : `absent|${command}`;
  let legal = table.get(key);
  if (legal === undefined) {
    const snapshot = nodeLegality.resolveState({ value: nodeStateValue(state), context: { nodeType: state.nodeType } });
    legal = snapshot.can({ type: command });
    table.set(key, legal);
  }
  return legal;
}
