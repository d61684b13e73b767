import { describe, expect, it } from "vitest";
import { entityIdOf } from "../../../src/events/streams.ts";
import type { DomainEvent } from "../../../src/projections/event-envelope.ts";
import { placementCommandId } from "../../../src/workflows/jobs/placement-by.ts";
import { DRAIN_ACTOR, DRAIN_ID_SEED, drainFlow } from "../../../src/workflows/nodes/drain-flow.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { workflowInput } from "../../support/workflow-input.ts";

const react = (stream: string, type: DomainEvent["type"]) =>
  drainFlow.react(workflowInput(stream, exampleEvent(type, entityIdOf(stream))));

describe("the drain workflow: which event calls for what", () => {
  it("a drain started moves the node's work, saying why", () => {
    const started = (Reason: string) =>
      drainFlow.react(
        workflowInput("node-n-1", {
          type: "NodeDrainStarted",
          data: {
            NodeID: "n-1",
            Deadline: "2026-01-01T01:00:00.000Z",
            KeepDaemon: false,
            Reason,
            By: { type: "operator", id: "ops" },
          },
        }),
      );
    expect(started("kernel upgrade")).toEqual([
      {
        handler: "node-drain",
        entityId: "n-1",
        type: "MoveDrainedWork",
        reason: "node n-1 is draining: kernel upgrade",
      },
    ]);
    expect(started("")[0]?.reason).toBe("node n-1 is draining");
  });

  it("a deadline reached stops each execution it names, one command each", () => {
    const left = [
      { ExecutionID: "e-1", JobID: "j-1", JobType: "batch" },
      { ExecutionID: "e-2", JobID: "j-2", JobType: "ops" },
    ];
    expect(
      drainFlow
        .react(
          workflowInput("node-n-1", {
            type: "NodeDrainDeadlineReached",
            data: { NodeID: "n-1", Deadline: "2026-01-01T01:00:00.000Z", Left: left },
          }),
        )
        .map((c) => `${c.type} ${c.entityId}: ${c.reason}`),
    ).toEqual([
      "StopDrainedExecution e-1: the drain deadline of node n-1 passed",
      "StopDrainedExecution e-2: the drain deadline of node n-1 passed",
    ]);
  });

  it("an undrain settles what a move left half done; other events call for nothing", () => {
    expect(react("node-n-1", "NodeUndrained").map((c) => c.type)).toEqual(["SettleUndrained"]);
    expect(react("node-n-1", "NodeDrainCompleted")).toEqual([]);
    expect(react("node-n-1", "NodeApproved")).toEqual([]);
    expect(react("execution-e-1", "ExecutionStarted")).toEqual([]);
  });

  it("acts as the workflow it is, and seeds its placements' ids as it always has", () => {
    expect(DRAIN_ACTOR).toEqual({ type: "workflow", id: "node-drain" });
    // The id of a replacement's placement command, as a drain derived it before the actor was a workflow: a replay
    // after an upgrade must derive the same one.
    const by = { actor: DRAIN_ACTOR, idSeed: DRAIN_ID_SEED, reason: "r", causationId: "c-1", correlationId: "c-1" };
    expect(placementCommandId("j-1", by)).toBe("486f492b-a9d9-5fb0-bf25-f38330adcbf7");
  });
});
