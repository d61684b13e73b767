import type { Decider } from "../decider.ts";
import type { NodeEvent } from "../../src/events/catalog/node-events.ts";
import { decideNode } from "./decide-node.ts";
import { evolveNode } from "./evolve-node.ts";
import type { NodeCommand, NodeRefusal } from "./node-commands.ts";
import { initialNodeState, type NodeState } from "./node-state.ts";

/** A node's rules as the generic actor host and the read model take them. */
export const nodeDecider: Decider<NodeState, NodeCommand, NodeEvent, NodeRefusal> = {
  initialState: initialNodeState,
  decide: decideNode,
  evolve: evolveNode,
};
