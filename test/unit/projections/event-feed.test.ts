import { describe, expect, it } from "vitest";
import { ENTITY_EVENTS } from "../../../src/events/catalog/entity-events.ts";
import { NODE_REACTION_RECORD_TYPES } from "../../../src/events/catalog/node-reaction-records.ts";
import { WORKFLOW_STEP_TYPES } from "../../../src/events/catalog/workflow-steps.ts";
import { storeFilterOf } from "../../../src/projections/event-feed/event-feed.ts";
import { LEGACY_WORKFLOW_NAMES, storeActorsOf } from "../../../src/projections/event-feed/feed-actors.ts";
import { categoryOfType, typesOfCategory } from "../../../src/projections/event-feed/feed-categories.ts";
import { forgetDeletedNodes } from "../../../src/workflows/forget-deleted-nodes.ts";
import { jobFlow } from "../../../src/workflows/jobs/job-flow.ts";
import { DRAIN_ACTOR, drainFlow } from "../../../src/workflows/nodes/drain-flow.ts";
import { NODE_REACTIONS_ACTOR } from "../../../src/workflows/nodes/node-reaction-runner.ts";
import { NODE_REACTIONS } from "../../../src/workflows/nodes/node-reactions.ts";

const entityTypes = ENTITY_EVENTS.flatMap((events) => Object.keys(events.versions));
const workflowTypes = [...WORKFLOW_STEP_TYPES, ...NODE_REACTION_RECORD_TYPES];

describe("the feed's filter as the store takes it", () => {
  it("categories are their kinds' types; by default the entities', never the workflows' records", () => {
    expect(storeFilterOf({})).toEqual({ types: entityTypes });
    expect(storeFilterOf({ categories: ["job"] })).toEqual({ types: Object.keys(ENTITY_EVENTS[1].versions) });
    expect(storeFilterOf({ categories: ["workflow"] })).toEqual({ types: workflowTypes });
    expect(typesOfCategory("workflow")).toEqual(workflowTypes);
    for (const type of entityTypes) expect(categoryOfType(type)).not.toBe("workflow");
    expect(categoryOfType("NodeApproved")).toBe("node");
    expect(categoryOfType("NodeLossQueued")).toBe("workflow");
    expect(categoryOfType("Nonsense")).toBeUndefined();
    // Every category asked for: no type condition (one range of the store, not one read per type).
    expect(storeFilterOf({ categories: ["node", "job", "execution", "workflow"] })).toEqual({});
  });

  it("asked types stay types; entities become their streams in the categories asked for", () => {
    expect(storeFilterOf({ types: ["NodeApproved", "JobStopped"] })).toEqual({ types: ["NodeApproved", "JobStopped"] });
    expect(storeFilterOf({ entities: ["n-1"] })).toEqual({
      types: entityTypes,
      streams: ["node-n-1", "job-n-1", "execution-n-1"],
    });
    expect(storeFilterOf({ categories: ["node"], entities: ["n-1", "n-2"] })).toEqual({
      types: typesOfCategory("node"),
      streams: ["node-n-1", "node-n-2"],
    });
    expect(storeFilterOf({ categories: ["workflow"], entities: ["jobs"] }).streams).toEqual(["workflow-jobs"]);
    expect(storeFilterOf({ since: 5, until: 9 })).toEqual({ types: entityTypes, since: 5, until: 9 });
  });

  it("a workflow is also found under the system actor its actions were stored as before the workflow type", () => {
    expect(storeActorsOf({ type: "operator", id: "alice" })).toEqual([{ type: "operator", id: "alice" }]);
    expect(storeActorsOf({ type: "node" })).toEqual([{ type: "node" }]);
    expect(storeActorsOf({ type: "workflow", id: "jobs" })).toEqual([
      { type: "workflow", id: "jobs" },
      { type: "system", id: "workflow-jobs" },
    ]);
    expect(storeActorsOf({ type: "workflow" })).toEqual([
      { type: "workflow" },
      ...LEGACY_WORKFLOW_NAMES.map((name) => ({ type: "system", id: `workflow-${name}` })),
    ]);
    expect(storeFilterOf({ actors: [{ type: "workflow", id: "node-drain" }] }).actors).toEqual([
      { type: "workflow", id: "node-drain" },
      { type: "system", id: "workflow-node-drain" },
    ]);
  });

  it("knows every workflow there is, under the actor ids the workflows act as", () => {
    const names = [jobFlow.name, NODE_REACTIONS, drainFlow.name, forgetDeletedNodes.name];
    expect([...LEGACY_WORKFLOW_NAMES].sort()).toEqual([...names].sort());
    const legacy = storeActorsOf({ type: "workflow" }).map((a) => a.id);
    // Today's actors are workflow:<name>; what older stores hold is system:workflow-<name>.
    for (const name of names) expect(legacy).toContain(`workflow-${name}`);
    for (const actor of [DRAIN_ACTOR, NODE_REACTIONS_ACTOR]) expect(actor.type).toBe("workflow");
  });
});
