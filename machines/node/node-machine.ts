import { assign, setup } from "xstate";
import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import type { Health, Membership, NodeInfo, NodeType } from "../../src/events/catalog/node-info.ts";

export interface NodeContext {
  readonly nodeId: string;
  readonly nodeType: NodeType | undefined;
  readonly info: NodeInfo | undefined;
  readonly membership: Membership | undefined;
  /** How many times this node has registered: a delete ends a lifecycle, the next register starts one. */
  readonly lifecycle: number;
  /** The key bound to this node id; `active: false` after a reject revoked it (an approve reinstates it). */
  readonly credential: NodeCredential | undefined;
}

export interface NodeCredential {
  readonly publicKey: string;
  readonly active: boolean;
}

/**
 * One compute (or requester) node, evolved by its stored events. Membership and health are
 * parallel regions of a registered node; a delete returns it to `absent` with its history kept.
 * Pure: the actor host decides with `decideNode`, appends, then applies with xstate's `transition`.
 */
export const nodeMachine = setup({
  types: {
    context: {} as NodeContext,
    events: {} as NodeEvent,
    input: {} as { nodeId: string },
  },
  guards: {
    registeredApproved: ({ context }) => context.membership === "APPROVED",
  },
  actions: {
    register: assign(({ event }) =>
      event.type === "NodeRegistered"
        ? { nodeType: event.data.NodeType, info: event.data.Info, membership: event.data.Membership, lifecycle: event.data.Lifecycle }
        : {},
    ),
    approve: assign({ membership: "APPROVED" as Membership }),
    reject: assign({ membership: "REJECTED" as Membership }),
    updateInfo: assign(({ event }) => (event.type === "NodeInfoUpdated" ? { info: event.data.Info } : {})),
    forget: assign({ membership: undefined, credential: undefined }),
    bind: assign(({ event }) => (event.type === "NodeCredentialBound" ? { credential: { publicKey: event.data.PublicKey, active: true } } : {})),
    revoke: assign(({ context }) => (context.credential ? { credential: { ...context.credential, active: false } } : {})),
  },
}).createMachine({
  id: "node",
  context: ({ input }) => ({ nodeId: input.nodeId, nodeType: undefined, info: undefined, membership: undefined, lifecycle: 0, credential: undefined }),
  initial: "absent",
  states: {
    absent: {
      on: { NodeRegistered: { target: "registered", actions: "register" } },
    },
    registered: {
      type: "parallel",
      on: {
        NodeDeleted: { target: "absent", actions: "forget" },
        NodeInfoUpdated: { actions: "updateInfo" },
        NodeCredentialBound: { actions: "bind" },
        NodeCredentialRevoked: { actions: "revoke" },
      },
      states: {
        membership: {
          initial: "entering",
          states: {
            entering: {
              always: [{ guard: "registeredApproved", target: "approved" }, { target: "pending" }],
            },
            pending: {
              on: { NodeApproved: { target: "approved", actions: "approve" }, NodeRejected: { target: "rejected", actions: "reject" } },
            },
            approved: { on: { NodeRejected: { target: "rejected", actions: "reject" } } },
            rejected: { on: { NodeApproved: { target: "approved", actions: "approve" } } },
          },
        },
        health: {
          initial: "healthy",
          states: {
            healthy: { on: { NodeBecameUnhealthy: "unhealthy" } },
            unhealthy: { on: { NodeBecameUnknown: "unknown", NodeBecameHealthy: "healthy" } },
            unknown: { on: { NodeBecameHealthy: "healthy" } },
          },
        },
      },
    },
  },
});

export type NodeSnapshot = ReturnType<typeof nodeMachine.getInitialSnapshot>;

export function nodeHealth(snapshot: NodeSnapshot): Health | undefined {
  if (snapshot.matches({ registered: { health: "healthy" } })) return "HEALTHY";
  if (snapshot.matches({ registered: { health: "unhealthy" } })) return "UNHEALTHY";
  if (snapshot.matches({ registered: { health: "unknown" } })) return "UNKNOWN";
  return undefined;
}

export function isRegistered(snapshot: NodeSnapshot): boolean {
  return snapshot.matches("registered");
}

/** The key NATS must let in for this node, if any. */
export function activeCredential(snapshot: NodeSnapshot): string | undefined {
  const credential = snapshot.context.credential;
  return isRegistered(snapshot) && credential?.active ? credential.publicKey : undefined;
}
