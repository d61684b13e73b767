import { describe, expect, it } from "vitest";
import { candidateNodeOf } from "../../../src/scheduler/candidate-node.ts";
import { EMPTY_LEDGER } from "../../../src/scheduler/capacity-ledger.ts";
import { placeJob } from "../../../src/scheduler/place-job.ts";
import type { NodeView } from "../../../src/projections/node-view.ts";
import { job, node } from "./scheduler-fixtures.ts";

const cordoned = (id: string, reason = "disk failing") => node(id, { cordoned: { reason } });

describe("a cordoned node takes no new placements", () => {
  it("places on the schedulable node only", () => {
    const r = placeJob(job({ count: 1, nodes: [cordoned("n-a"), node("n-b")] }), EMPTY_LEDGER);
    expect(r).toMatchObject({ decision: "placed", placements: [{ nodeId: "n-b" }] });
  });

  it("a batch job with only cordoned nodes fails naming the reason (or queues, with a QueueTimeout)", () => {
    const r = placeJob(job({ nodes: [cordoned("n-a")] }), EMPTY_LEDGER);
    expect(r.decision).toBe("failed");
    expect(r.message).toBe(
      "not enough nodes to run job. requested: 1, available: 1, suitable: 0.\n• Node n-a: node is cordoned (disk failing)",
    );
    const queued = placeJob(
      job({ nodes: [cordoned("n-a", "")], queue: { timeoutMs: 60_000, createdAtMs: 1_000, nowMs: 1_000 } }),
      EMPTY_LEDGER,
    );
    expect(queued.decision).toBe("queued");
    expect(queued.message).toContain("node is cordoned");
  });

  it("ops and daemon jobs skip cordoned nodes too (Nomad's ineligible nodes take no system jobs)", () => {
    const ops = placeJob(job({ type: "ops", nodes: [cordoned("n-a"), node("n-b")] }), EMPTY_LEDGER);
    expect(ops.placements.map((p) => p.nodeId)).toEqual(["n-b"]);
    const daemon = placeJob(job({ type: "daemon", nodes: [cordoned("n-a")] }), EMPTY_LEDGER);
    expect(daemon).toMatchObject({ decision: "waiting", placements: [] });
    expect(daemon.message).toContain("node is cordoned (disk failing)");
  });

  it("the read model's cordon and operator labels reach the candidate", () => {
    const view = {
      nodeId: "n-a",
      nodeType: "Compute",
      membership: "APPROVED",
      health: "HEALTHY",
      info: {
        NodeID: "n-a",
        NodeType: "Compute",
        Labels: { zone: "a", rack: "r1" },
        ComputeNodeInfo: { ExecutionEngines: ["docker"], MaxCapacity: {}, MaxJobRequirements: {} },
      },
      labelOverrides: { zone: "b", rack: null },
      cordon: { reason: "maintenance", by: { type: "operator", id: "alice" }, since: "2026-01-01T00:00:00.000Z" },
    } as unknown as NodeView;
    expect(candidateNodeOf(view)).toMatchObject({ labels: { zone: "b" }, cordoned: { reason: "maintenance" } });
    expect(candidateNodeOf(view).labels).not.toHaveProperty("rack");
  });
});
