import type { Actor } from "../events/catalog/event-metadata.ts";

/**
 * Who a workflow's events and commands say caused them: the workflow by its name (`workflow:jobs`), so an auditor
 * tells Shoal's automatic actions from an operator's, a node's or the orchestrator's own. Only the actor: the ids a
 * workflow derives keep their own seeds (a stored id must come out the same after an upgrade).
 */
export const workflowActor = (name: string): Actor => ({ type: "workflow", id: name });
