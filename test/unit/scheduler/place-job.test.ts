import { describe, expect, it } from "vitest";
import { EMPTY_LEDGER, ledgerOf, placedOn, type CapacityLedger } from "../../../src/scheduler/capacity-ledger.ts";
import { RETRIES_EXHAUSTED_MESSAGE, placeJob, type PlacementResult } from "../../../src/scheduler/place-job.ts";
import type { PlacementRequest } from "../../../src/scheduler/placement-request.ts";
import { fitsWithin } from "../../../src/scheduler/resources.ts";
import { candidateNodeOf } from "../../../src/scheduler/candidate-node.ts";
import { PlacementInputError } from "../../../src/scheduler/placement-input-error.ts";
import { jobQueuedMessage } from "../../../src/scheduler/shortfall-message.ts";
import type { NodeView } from "../../../src/projections/node-view.ts";
import { GB, exec, job, node, res } from "./scheduler-fixtures.ts";

const three = [node("n-a"), node("n-b"), node("n-c")];
const onNodes = (r: PlacementResult) => r.placements.map((p) => p.nodeId);
const QUEUE = { timeoutMs: 60_000, createdAtMs: 1_000, nowMs: 1_000 };

describe("batch and service jobs: Count replicas, one per node", () => {
  it.each([
    { type: "batch", count: 1, nodes: 1 },
    { type: "batch", count: 2, nodes: 2 },
    { type: "batch", count: 3, nodes: 3 },
    { type: "service", count: 2, nodes: 2 },
  ] as const)("$type with Count $count lands on $nodes distinct nodes", ({ type, count, nodes }) => {
    const r = placeJob(job({ type, count, nodes: three }), EMPTY_LEDGER);
    expect(r.decision).toBe("placed");
    expect(new Set(onNodes(r)).size).toBe(nodes);
    expect(r.placements.map((p) => p.partitionIndex)).toEqual([...Array(count).keys()]);
    for (const p of r.placements) expect(placedOn(r.ledger, p.nodeId)).toEqual(res(500, GB));
  });

  it("creates only the replicas that have no active or completed execution", () => {
    const r = placeJob(
      job({
        count: 3,
        nodes: three,
        executions: [
          exec("e0", "n-a", "Running", { partitionIndex: 0 }),
          exec("e1", "n-b", "Completed", { partitionIndex: 1 }),
          exec("e2", "n-c", "Failed", { partitionIndex: 2 }),
        ],
      }),
      EMPTY_LEDGER,
    );
    // Partition 2 failed on n-c: n-a runs one and n-b completed one, so n-c takes its retry.
    expect(r.placements).toEqual([
      { nodeId: "n-c", desiredState: "Pending", partitionIndex: 2, resources: res(500, GB) },
    ]);
  });

  it("counts executions without a partition index against the lowest free replicas", () => {
    const r = placeJob(job({ count: 3, nodes: three, executions: [exec("e0", "n-b", "BidAccepted")] }), EMPTY_LEDGER);
    expect(r.placements.map((p) => p.partitionIndex)).toEqual([1, 2]);
    expect(onNodes(r)).not.toContain("n-b");
  });

  it("has nothing to do for a batch job whose replicas completed, but replaces a service's completed one", () => {
    const executions = [exec("e0", "n-a", "Completed", { partitionIndex: 0 })];
    expect(placeJob(job({ nodes: three, executions }), EMPTY_LEDGER)).toMatchObject({
      decision: "placed",
      placements: [],
    });
    const service = placeJob(job({ type: "service", nodes: three, executions }), EMPTY_LEDGER);
    expect(service.placements).toHaveLength(1);
    expect(service.placements[0]?.partitionIndex).toBe(0);
  });

  it("does not count an execution asked to stop as holding its replica", () => {
    const r = placeJob(
      job({ nodes: three, executions: [exec("e0", "n-a", "Running", { partitionIndex: 0, desiredState: "Stopped" })] }),
      EMPTY_LEDGER,
    );
    expect(r.placements).toHaveLength(1);
  });

  it("spreads jobs placed in sequence over equal nodes (the freest node ranks first)", () => {
    let ledger: CapacityLedger = EMPTY_LEDGER;
    const chosen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = placeJob(job({ jobId: `j-${i}`, nodes: three }), ledger);
      chosen.push(...onNodes(r));
      ledger = r.ledger;
    }
    expect(chosen.sort()).toEqual(["n-a", "n-b", "n-c"]);
  });

  it("gives the same answer whatever order the nodes come in", () => {
    const a = placeJob(job({ count: 2, nodes: three }), EMPTY_LEDGER);
    const b = placeJob(job({ count: 2, nodes: [...three].reverse() }), EMPTY_LEDGER);
    expect(b).toEqual(a);
  });
});

describe("too few nodes: fail at once, or queue within the QueueTimeout", () => {
  const cases: {
    name: string;
    request: Partial<PlacementRequest>;
    decision: PlacementResult["decision"];
    placed: number;
    jobQueued?: boolean;
    cause: "busy" | "no-match";
  }[] = [
    {
      name: "no QueueTimeout, no node: fails",
      request: { nodes: [] },
      decision: "failed",
      placed: 0,
      cause: "no-match",
    },
    {
      name: "no QueueTimeout, Count 4 on 3 nodes: fails, placing nothing",
      request: { count: 4, nodes: three },
      decision: "failed",
      placed: 0,
      cause: "no-match",
    },
    {
      name: "QueueTimeout, no node: the job is queued",
      request: { nodes: [], queue: QUEUE },
      decision: "queued",
      placed: 0,
      jobQueued: true,
      cause: "no-match",
    },
    {
      name: "QueueTimeout, Count 4 on 3 nodes: 3 placed, one waits, the job is not marked Queued",
      request: { count: 4, nodes: three, queue: QUEUE },
      decision: "queued",
      placed: 3,
      jobQueued: false,
      cause: "no-match",
    },
    {
      name: "QueueTimeout, every node busy: queued because all are busy",
      request: { nodes: [node("n-a", { capacity: res(400, 4 * GB, 100 * GB) })], queue: QUEUE },
      decision: "queued",
      placed: 0,
      jobQueued: true,
      cause: "busy",
    },
    {
      name: "QueueTimeout, only unhealthy and pending nodes: none matching",
      request: { nodes: [node("n-a", { health: "UNHEALTHY" }), node("n-b", { membership: "PENDING" })], queue: QUEUE },
      decision: "queued",
      placed: 0,
      jobQueued: true,
      cause: "no-match",
    },
    {
      name: "QueueTimeout reached exactly: still queued",
      request: { nodes: [], queue: { timeoutMs: 60_000, createdAtMs: 1_000, nowMs: 61_000 } },
      decision: "queued",
      placed: 0,
      jobQueued: true,
      cause: "no-match",
    },
    {
      name: "past the QueueTimeout: fails",
      request: { nodes: [], queue: { timeoutMs: 60_000, createdAtMs: 1_000, nowMs: 61_001 } },
      decision: "failed",
      placed: 0,
      cause: "no-match",
    },
  ];

  it.each(cases)("$name", ({ request, decision, placed, jobQueued, cause }) => {
    const r = placeJob(job(request), EMPTY_LEDGER);
    expect(r.decision).toBe(decision);
    expect(r.placements).toHaveLength(placed);
    expect(r.jobQueued).toBe(jobQueued);
    expect(r.shortfall?.cause).toBe(cause);
    expect(r.message).toMatch(/^not enough nodes to run job\. requested: \d+, available: \d+, suitable: \d+\./);
    if (decision === "failed") expect(r.ledger).toBe(EMPTY_LEDGER);
  });

  it("says how many were requested, available and suitable, then why per node group (Bacalhau's ErrNotEnoughNodes)", () => {
    const labels = { Architecture: "amd64", "Operating-System": "linux", owner: "bacalhau" };
    const r = placeJob(
      job({
        constraints: [{ key: "owner", operator: "=", values: ["bacalhau"] }],
        nodes: [
          node("n-b75224b7-0000-4000-8000-000000000001", { labels }),
          node("n-d42422fd-0000-4000-8000-000000000002", { labels: { owner: "other" } }),
          node("n-e0000000-0000-4000-8000-000000000003", { labels: { owner: "other" } }),
          node("n-f50db1f9-0000-4000-8000-000000000004", { labels: { owner: "other" } }),
          node("n-pending", { membership: "PENDING", labels }),
        ],
      }),
      ledgerOf([{ nodeId: "n-b75224b7-0000-4000-8000-000000000001", resources: res(1800, GB) }]),
    );
    expect(r.decision).toBe("failed");
    expect(r.shortfall).toEqual({ requested: 1, available: 4, suitable: 0, cause: "busy" });
    expect(r.message).toBe(
      "not enough nodes to run job. requested: 1, available: 4, suitable: 0." +
        "\n• 3 of 4 nodes: labels map[owner:other] don't match required selectors [owner = bacalhau]" +
        "\n• Node n-b75224b7: node busy with available capacity {CPU: 0.20, Memory: 3.0 GB, Disk: 100 GB, GPU: 0}",
    );
    // The pending node is not available in Bacalhau's sense, but its verdict says why.
    expect(r.nodes.find((v) => v.nodeId === "n-pending")?.rejections.map((x) => x.code)).toEqual(["not-approved"]);
  });

  it("gives the history message of a queued job", () => {
    const r = placeJob(job({ nodes: [], queue: QUEUE }), EMPTY_LEDGER);
    expect(jobQueuedMessage(r.message ?? "")).toBe(
      "Job queued. not enough nodes to run job. requested: 1, available: 0, suitable: 0.",
    );
  });

  it("counts only what is still needed as requested", () => {
    const r = placeJob(
      job({ count: 3, nodes: [node("n-a")], executions: [exec("e0", "n-b", "Running", { partitionIndex: 0 })] }),
      EMPTY_LEDGER,
    );
    expect(r.message).toBe("not enough nodes to run job. requested: 2, available: 1, suitable: 1.");
  });
});

describe("retries of failed executions", () => {
  it("retries a failed replica on another node first", () => {
    const r = placeJob(
      job({ nodes: three, executions: [exec("e1", "n-a", "Failed", { partitionIndex: 0 })] }),
      EMPTY_LEDGER,
    );
    expect(r.decision).toBe("placed");
    expect(onNodes(r)).not.toContain("n-a");
  });

  it("retries on a node where it failed once when no other is left", () => {
    const r = placeJob(
      job({ nodes: [node("n-a")], executions: [exec("e1", "n-a", "Failed", { partitionIndex: 0 })] }),
      EMPTY_LEDGER,
    );
    expect(onNodes(r)).toEqual(["n-a"]);
  });

  it("is bounded: a job fails once every node ran it twice", () => {
    const nodes = [node("n-a"), node("n-b")];
    let executions: PlacementRequest["executions"] = [];
    const tried: string[] = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      const r = placeJob(job({ nodes, executions }), EMPTY_LEDGER);
      if (r.decision !== "placed") {
        expect(r.decision).toBe("failed");
        expect(r.message).toBe(
          "not enough nodes to run job. requested: 1, available: 2, suitable: 0.\n• 2 of 2 nodes: job already executed on this node more than once",
        );
        break;
      }
      const p = r.placements[0];
      if (p === undefined) throw new Error("no placement");
      tried.push(p.nodeId);
      executions = [...executions, exec(`e${attempt}`, p.nodeId, "Failed", { partitionIndex: 0 })];
    }
    expect(tried).toHaveLength(4);
    expect(tried.filter((n) => n === "n-a")).toHaveLength(2);
  });

  it.each([
    { maxRetries: 0, failed: 1, decision: "failed" },
    { maxRetries: 1, failed: 1, decision: "placed" },
    { maxRetries: 1, failed: 2, decision: "failed" },
    { maxRetries: undefined, failed: 2, decision: "placed" },
  ] as const)("maxRetries $maxRetries after $failed failures: $decision", ({ maxRetries, failed, decision }) => {
    const executions = [...Array(failed).keys()].map((i) =>
      exec(`e${i}`, `n-${"ab"[i]}`, "Failed", { partitionIndex: 0 }),
    );
    const r = placeJob(
      job({ nodes: three, executions, ...(maxRetries === undefined ? {} : { maxRetries }) }),
      EMPTY_LEDGER,
    );
    expect(r.decision).toBe(decision);
    if (decision === "failed") expect(r.message).toBe(RETRIES_EXHAUSTED_MESSAGE);
  });

  it("does not fail a job whose failed replica is no longer needed", () => {
    const executions = [
      exec("e0", "n-a", "Failed", { partitionIndex: 0 }),
      exec("e1", "n-b", "Running", { partitionIndex: 0 }),
    ];
    expect(placeJob(job({ nodes: three, executions, maxRetries: 0 }), EMPTY_LEDGER)).toMatchObject({
      decision: "placed",
      placements: [],
    });
  });
});

describe("ops jobs: one execution on every matching node", () => {
  it("lands on each matching node and no other", () => {
    const r = placeJob(
      job({ type: "ops", count: 0, nodes: [...three, node("n-wasm", { engines: ["wasm"] })] }),
      EMPTY_LEDGER,
    );
    expect(r.decision).toBe("placed");
    expect(onNodes(r)).toEqual(["n-a", "n-b", "n-c"]);
    expect(r.placements.every((p) => p.partitionIndex === undefined && p.desiredState === "Running")).toBe(true);
  });

  it("adds a node that matches later, leaving the nodes it ran on alone", () => {
    const executions = [exec("e0", "n-a", "Completed"), exec("e1", "n-b", "Failed")];
    expect(onNodes(placeJob(job({ type: "ops", nodes: three, executions }), EMPTY_LEDGER))).toEqual(["n-c"]);
    expect(placeJob(job({ type: "ops", nodes: three.slice(0, 2), executions }), EMPTY_LEDGER)).toMatchObject({
      decision: "placed",
      placements: [],
    });
  });

  it("fails with Bacalhau's ErrNoMatchingNodes when nothing matches, or queues within its QueueTimeout", () => {
    const nodes = [node("n-a", { engines: ["wasm"] }), node("n-b", { engines: ["wasm"] })];
    const failed = placeJob(job({ type: "ops", nodes }), EMPTY_LEDGER);
    expect(failed.decision).toBe("failed");
    expect(failed.message).toBe(
      "not matching nodes to run job out of 2 available nodes.\n• 2 of 2 nodes: does not support docker, only wasm",
    );
    expect(placeJob(job({ type: "ops", nodes, queue: QUEUE }), EMPTY_LEDGER)).toMatchObject({
      decision: "queued",
      jobQueued: true,
    });
  });
});

describe("daemon jobs: one execution on every matching node, new nodes included", () => {
  it("lands on each matching node; a node that joins later gets one; nodes that run one do not", () => {
    const first = placeJob(job({ type: "daemon", nodes: three.slice(0, 2) }), EMPTY_LEDGER);
    expect(onNodes(first)).toEqual(["n-a", "n-b"]);
    const executions = [exec("e0", "n-a", "Running"), exec("e1", "n-b", "Running")];
    const later = placeJob(job({ type: "daemon", nodes: three, executions }), first.ledger);
    expect(onNodes(later)).toEqual(["n-c"]);
  });

  it("waits, never fails, when no node matches", () => {
    const r = placeJob(job({ type: "daemon", nodes: [node("n-a", { health: "UNKNOWN" })] }), EMPTY_LEDGER);
    expect(r).toMatchObject({
      decision: "waiting",
      placements: [],
      message: "not matching nodes to run job out of 0 available nodes.",
    });
  });
});

describe("placements in sequence cannot overbook a node", () => {
  it("a second job does not get the capacity the first one took", () => {
    const only = [node("n-a")]; // 2 cores
    const first = placeJob(job({ jobId: "j-1", nodes: only, resources: res(1500) }), EMPTY_LEDGER);
    expect(onNodes(first)).toEqual(["n-a"]);
    const second = placeJob(job({ jobId: "j-2", nodes: only, resources: res(1000) }), first.ledger);
    expect(second.decision).toBe("failed");
    expect(second.shortfall?.cause).toBe("busy");
    expect(second.message).toContain("node busy with available capacity {CPU: 0.50,");
    // Given the ledger from before the first placement, it would have overbooked.
    expect(placeJob(job({ jobId: "j-2", nodes: only, resources: res(1000) }), EMPTY_LEDGER).decision).toBe("placed");
  });

  it("many jobs of every type placed in turn never exceed any node's capacity", () => {
    const nodes = [
      node("n-a"),
      node("n-b", { capacity: res(1000, 2 * GB, 10 * GB) }),
      node("n-c", { capacity: res(3000, 8 * GB, 10 * GB, 1) }),
    ];
    const types = ["batch", "service", "ops", "daemon"] as const;
    let ledger: CapacityLedger = EMPTY_LEDGER;
    let placed = 0;
    for (let i = 0; i < 40; i++) {
      const r = placeJob(
        job({
          jobId: `j-${i}`,
          type: types[i % 4],
          count: 1 + (i % 3),
          nodes,
          resources: res(250 * (1 + (i % 3)), GB / 2),
          queue: QUEUE,
        }),
        ledger,
      );
      placed += r.placements.length;
      ledger = r.ledger;
      for (const n of nodes)
        expect(fitsWithin(placedOn(ledger, n.id), n.capacity), `${n.id} after job ${i}`).toBe(true);
    }
    expect(placed).toBeGreaterThan(10);
    // The cluster ends full: nothing more of the smallest size fits anywhere.
    expect(placeJob(job({ nodes, resources: res(250, GB / 2) }), ledger).decision).toBe("failed");
  });
});

describe("bad input", () => {
  it.each([
    [{ count: -1 }, "Count must be a whole number ≥ 0, not -1"],
    [{ count: 1.5 }, "Count must be a whole number ≥ 0, not 1.5"],
    [{ resources: res(0.5) }, "job resources: cpuMillis must be a whole number ≥ 0, not 0.5"],
    [{ maxRetries: -2 }, "maxRetries must be a whole number ≥ 0, not -2"],
    [
      { nodes: [node("n-a", { capacity: res(-1) })] },
      "node n-a capacity: cpuMillis must be a whole number ≥ 0, not -1",
    ],
  ] as const)("%j is refused: %s", (over, message) => {
    expect(() => placeJob(job(over), EMPTY_LEDGER)).toThrow(new PlacementInputError(message));
  });
});

describe("a node read-model entry as a candidate", () => {
  it("takes engines, publishers, capacity and MaxJobRequirements from its ComputeNodeInfo, in placement units", () => {
    const view = {
      nodeId: "n-a",
      nodeType: "Compute",
      membership: "APPROVED",
      health: "HEALTHY",
      info: {
        NodeID: "n-a",
        NodeType: "Compute",
        Hostname: "h",
        Labels: { zone: "a" },
        ComputeNodeInfo: {
          ExecutionEngines: ["docker"],
          Publishers: ["local"],
          StorageSources: [],
          MaxCapacity: { CPU: 1.6, Memory: 3.2 * GB, Disk: 80 * GB, GPU: 0 },
          MaxJobRequirements: {},
        },
        BacalhauVersion: { GitVersion: "v1.7.0", GOOS: "linux", GOARCH: "amd64" },
      },
      labelOverrides: {},
    } as unknown as NodeView;
    expect(candidateNodeOf(view)).toEqual({
      id: "n-a",
      type: "Compute",
      membership: "APPROVED",
      health: "HEALTHY",
      labels: { zone: "a" },
      engines: ["docker"],
      publishers: ["local"],
      capacity: res(1600, 3.2 * GB, 80 * GB, 0),
    });
  });
});
