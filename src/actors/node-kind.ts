import { nodeDecider } from "../../machines/node/node-decider.ts";
import type { NodeCommand, NodeRefusal } from "../../machines/node/node-commands.ts";
import type { NodeState } from "../../machines/node/node-state.ts";
import { nodeEvents } from "../events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../events/catalog/node-events.ts";
import { badRequest, conflict, forbidden, notFound, type ShoalError } from "../errors/shoal-error.ts";
import { entityKind, type EntityKind } from "./entity-kind.ts";

function refusalError(refusal: NodeRefusal): ShoalError {
  switch (refusal.code) {
    case "NotFound":
      return notFound(refusal.message);
    case "Conflict":
      return conflict(refusal.message);
    case "Rejected":
      return forbidden(refusal.message);
    case "Invalid":
      return badRequest(refusal.message);
  }
}

export type NodeKind = EntityKind<NodeState, NodeCommand, NodeEvent, NodeRefusal>;

/** Nodes as the generic actor host sees them. */
export const nodeKind: NodeKind = entityKind(nodeEvents, { decider: nodeDecider, refusalError });
