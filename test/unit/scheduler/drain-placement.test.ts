import { describe, expect, it } from "vitest";
import { candidateNodeOf } from "../../../src/scheduler/candidate-node.ts";
import { ledgerOf } from "../../../src/scheduler/capacity-ledger.ts";
import { placeJob, remainingPartitions } from "../../../src/scheduler/place-job.ts";
import type { NodeView } from "../../../src/projections/node-view.ts";
import { computeInfo } from "../../support/fixtures.ts";
import { exec, job, node } from "./scheduler-fixtures.ts";
import { drainUnderWay } from "../../support/drain-under-way.ts";

describe("placement and drains", () => {
  it("a draining node takes no new work, and the shortfall says it is draining", () => {
    const r = placeJob(
      job({ count: 2, nodes: [node("n-1"), node("n-2", { unschedulable: "node is draining" })] }),
      ledgerOf([]),
    );
    expect(r.decision).toBe("failed");
    expect(r.message).toBe(
      "not enough nodes to run job. requested: 2, available: 2, suitable: 1.\n• Node n-2: node is draining",
    );
    expect(r.nodes.find((v) => v.nodeId === "n-2")?.rejections).toEqual([
      { code: "unschedulable", message: "node is draining", retryable: false },
    ]);
  });

  it("a service execution leaving a draining node holds no partition: its replacement is placed on another node while it runs", () => {
    const leaving = exec("e-1", "n-2", "Running", { partitionIndex: 0, leaving: true });
    expect(remainingPartitions("service", 1, [leaving], 10)).toEqual([0]);
    expect(remainingPartitions("service", 1, [{ ...leaving, leaving: false }], 10)).toEqual([]);
    const r = placeJob(
      job({
        type: "service",
        executions: [leaving],
        nodes: [node("n-1"), node("n-2", { unschedulable: "node is draining" })],
      }),
      ledgerOf([]),
    );
    expect(r.placements).toMatchObject([{ nodeId: "n-1", partitionIndex: 0 }]);
  });

  it("a node view's drain makes its candidate unschedulable", () => {
    const base = {
      nodeId: "n-1",
      registered: true,
      deleted: false,
      nodeType: "Compute",
      info: computeInfo("n-1"),
      membership: "APPROVED",
      health: "HEALTHY",
      lifecycle: 1,
      credential: undefined,
      registeredAt: "t",
      updatedAt: "t",
      healthSince: "t",
      lastHeartbeatAtChange: null,
      revision: 0,
      cordon: undefined,
      labelOverrides: {},
      preauthorization: undefined,
    } as const;
    const drain = drainUnderWay();
    expect(candidateNodeOf(base as NodeView).unschedulable).toBeUndefined();
    expect(candidateNodeOf({ ...base, drain } as NodeView).unschedulable).toBe("node is draining");
    expect(candidateNodeOf({ ...base, drain: { ...drain, status: "drained" } } as NodeView).unschedulable).toBe(
      "node is drained",
    );
  });
});
