import { describe, expect, it } from "vitest";
import { CorruptEventError } from "../../../src/events/catalog/event-codec-errors.ts";
import { entityIdOf } from "../../../src/events/streams.ts";
import { EventEnvelope, type DomainEvent } from "../../../src/projections/event-envelope.ts";
import { nodeReactions, type NodeWorkQuery } from "../../../src/workflows/nodes/node-reactions.ts";
import { workflowInputOf } from "../../../src/workflows/workflow-input.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { recordedEvent } from "../../support/recorded-event.ts";
import { workflowInput } from "../../support/workflow-input.ts";

/** n-busy runs a batch execution, n-daemon a daemon one, n-back ran work lost while it was away, n-idle nothing. */
const query: NodeWorkQuery = {
  holdsWork: (id) => id === "n-busy" || id === "n-daemon",
  holdsDaemonWork: (id) => id === "n-daemon",
  mayRunLostWork: (id) => id === "n-back",
};
const react = (stream: string, type: DomainEvent["type"], data?: object) =>
  nodeReactions(query)
    .react(workflowInput(stream, exampleEvent(type, entityIdOf(stream), data)))
    .map((c) => `${c.handler} ${c.type} ${c.entityId}: ${c.reason}`);

describe("the node-reactions workflow: given a node's work, when its state changes, then", () => {
  it.each([
    ["node-n-busy", "NodeBecameUnhealthy", undefined, ["node-work QueueNodeLoss n-busy: node n-busy became UNHEALTHY"]],
    ["node-n-busy", "NodeBecameUnknown", undefined, ["node-work QueueNodeLoss n-busy: node n-busy became UNKNOWN"]],
    ["node-n-busy", "NodeRejected", undefined, ["node-work LoseNodeWork n-busy: node n-busy was rejected"]],
    ["node-n-busy", "NodeDeleted", undefined, ["node-work LoseNodeWork n-busy: node n-busy was deleted"]],
    ["node-n-back", "NodeBecameHealthy", undefined, ["node-work StopLostWork n-back: node n-back is back (HEALTHY)"]],
    ["node-n-back", "NodeApproved", undefined, ["node-work StopLostWork n-back: node n-back is back (approved)"]],
    [
      "node-n-daemon",
      "NodeInfoUpdated",
      { Changed: ["Labels"] },
      ["node-work CheckDaemonMatch n-daemon: node n-daemon's labels changed"],
    ],
    [
      "node-n-daemon",
      "NodeLabelsSet",
      { Set: { role: "core" }, Removed: [], Reset: [] },
      ["node-work CheckDaemonMatch n-daemon: node n-daemon's labels changed"],
    ],
    // No step for what changes nothing: nodes that run nothing (most node events), and info that is not labels.
    ["node-n-idle", "NodeBecameUnhealthy", undefined, []],
    ["node-n-idle", "NodeBecameUnknown", undefined, []],
    ["node-n-idle", "NodeDeleted", undefined, []],
    ["node-n-idle", "NodeRejected", undefined, []],
    ["node-n-busy", "NodeBecameHealthy", undefined, []],
    ["node-n-busy", "NodeInfoUpdated", { Changed: ["Labels"] }, []],
    ["node-n-daemon", "NodeInfoUpdated", { Changed: ["ComputeNodeInfo"] }, []],
    ["node-n-busy", "NodeRegistered", undefined, []],
    ["node-n-busy", "NodeCredentialRevoked", undefined, []],
    // Not a node's event.
    ["execution-e-1", "ExecutionFailed", undefined, []],
  ] as const)("%s %s %j → %j", (stream, type, data, commands) => {
    expect(react(stream, type, data)).toEqual(commands);
  });
});

describe("the node-reactions workflow's inputs", () => {
  it("are entities' events of their own kind: a node's event in a job's stream is corrupt, never an input", () => {
    const misplaced = new EventEnvelope({
      ...recordedEvent("node-n-busy", exampleEvent("NodeDeleted", "n-busy")),
      stream: "job-j-1",
    });
    expect(() => workflowInputOf(misplaced)).toThrow(CorruptEventError);
    expect(() => workflowInputOf(misplaced)).toThrow(/job-j-1@0: unknown job event type NodeDeleted/);
  });
});

describe("the node-reactions workflow, when a node is back", () => {
  it("asks what it may still run as of its return's store position (the same answer on a replay)", () => {
    const asked: [string, number][] = [];
    const lostBefore: NodeWorkQuery = {
      ...query,
      mayRunLostWork: (id, at) => {
        asked.push([id, at]);
        return at > 40;
      },
    };
    const back = (position: number) =>
      nodeReactions(lostBefore)
        .react(workflowInput("node-n-1", exampleEvent("NodeBecameHealthy", "n-1"), position))
        .map((c) => c.type);
    expect([back(42), back(7)]).toEqual([["StopLostWork"], []]);
    expect(asked).toEqual([
      ["n-1", 42],
      ["n-1", 7],
    ]);
  });
});
