import { describe, expect, it } from "vitest";
import { ledgerOf, EMPTY_LEDGER, type CapacityLedger } from "../../../src/scheduler/capacity-ledger.ts";
import { constraintProblem, jobSelectors } from "../../../src/scheduler/job-constraints.ts";
import { PlacementInputError } from "../../../src/scheduler/placement-input-error.ts";
import { judgeNodes, type RejectionCode } from "../../../src/scheduler/node-verdicts.ts";
import type {
  CandidateNode,
  ConstraintRequirement,
  PlacementRequest,
} from "../../../src/scheduler/placement-request.ts";
import { placeJob } from "../../../src/scheduler/place-job.ts";
import { GB, exec, job, node, res } from "./scheduler-fixtures.ts";

function verdictOf(n: CandidateNode, over: Partial<PlacementRequest> = {}, ledger: CapacityLedger = EMPTY_LEDGER) {
  const request = job({ nodes: [n], ...over });
  const [v] = judgeNodes(request, jobSelectors(request.constraints), ledger);
  if (v === undefined) throw new Error("no verdict");
  return v;
}

const c = (key: string, operator: string, ...values: string[]): ConstraintRequirement => ({ key, operator, values });

describe("the node filter: every reason a node cannot take the job", () => {
  const cases: {
    name: string;
    node: CandidateNode;
    over?: Partial<PlacementRequest>;
    ledger?: CapacityLedger;
    codes: RejectionCode[];
    messages?: string[];
    available: boolean;
  }[] = [
    {
      name: "a Requester node",
      node: node("n1", { type: "Requester" }),
      codes: ["not-compute"],
      messages: ["node is a Requester node, not a Compute node"],
      available: false,
    },
    {
      name: "a PENDING node",
      node: node("n1", { membership: "PENDING" }),
      codes: ["not-approved"],
      messages: ["node membership is PENDING, not APPROVED"],
      available: false,
    },
    {
      name: "a REJECTED node",
      node: node("n1", { membership: "REJECTED" }),
      codes: ["not-approved"],
      available: false,
    },
    {
      name: "an UNHEALTHY node",
      node: node("n1", { health: "UNHEALTHY" }),
      codes: ["not-healthy"],
      messages: ["node is UNHEALTHY, not HEALTHY"],
      available: false,
    },
    { name: "an UNKNOWN node", node: node("n1", { health: "UNKNOWN" }), codes: ["not-healthy"], available: false },
    {
      name: "a node without the engine",
      node: node("n1", { engines: ["wasm", "noop"] }),
      codes: ["engine"],
      messages: ["does not support docker, only wasm, noop"],
      available: true,
    },
    {
      name: "a node without the job's publisher",
      node: node("n1", { publishers: ["s3"] }),
      over: { publisher: "local" },
      codes: ["publisher"],
      messages: ["does not support local, only s3"],
      available: true,
    },
    {
      name: "a node that advertises no publishers (one from before results), for a job with one",
      node: node("n1"),
      over: { publisher: "local" },
      codes: ["publisher"],
      messages: ["does not support local, it publishes no results"],
      available: true,
    },
    {
      name: "a node without a storage type the job's inputs use",
      node: node("n1", { storageSources: ["urlDownload"] }),
      over: { storageTypes: ["urlDownload", "localDirectory"] },
      codes: ["storage"],
      messages: ["does not support localDirectory, only urlDownload"],
      available: true,
    },
    {
      name: "a node with no storage at all, for a job with inputs",
      node: node("n1"),
      over: { storageTypes: ["urlDownload"] },
      codes: ["storage"],
      messages: ["does not support urlDownload, it reads no input sources"],
      available: true,
    },
    {
      name: "a node whose labels do not match",
      node: node("n1", { labels: { Architecture: "amd64", "Operating-System": "linux", owner: "bacalhau" } }),
      over: { constraints: [c("name", "=", "walid")] },
      codes: ["labels"],
      messages: [
        "labels map[Architecture:amd64 Operating-System:linux owner:bacalhau] don't match required selectors [name = walid]",
      ],
      available: true,
    },
    {
      name: "a node over the job's limit (MaxJobRequirements)",
      node: node("n1", { maxJobRequirements: res(1000, GB / 2, 100 * GB, 0) }),
      over: { resources: res(2000, GB, 0, 1) },
      // 2 cores is also more than this node has free: both reasons are named.
      codes: ["max-job-requirements", "busy"],
      messages: [
        "job requires more CPU (2) than the maximum available (1) and more memory (1.0 GB) than the maximum available (500 MB) and more GPUs (1) than the maximum available (0)",
        "node busy with available capacity {CPU: 2.00, Memory: 4.0 GB, Disk: 100 GB, GPU: 0}",
      ],
      available: true,
    },
    {
      name: "a node reporting no capacity",
      node: node("n1", { capacity: res(0) }),
      codes: ["capacity-unknown"],
      available: true,
    },
    {
      name: "a node whose capacity Shoal has already placed",
      node: node("n1"),
      ledger: ledgerOf([{ nodeId: "n1", resources: res(1800, GB) }]),
      codes: ["busy"],
      messages: ["node busy with available capacity {CPU: 0.20, Memory: 3.0 GB, Disk: 100 GB, GPU: 0}"],
      available: true,
    },
    {
      name: "a node without the GPU asked for",
      node: node("n1"),
      over: { resources: res(100, 0, 0, 1) },
      codes: ["busy"],
      available: true,
    },
    {
      name: "a node without the disk asked for",
      node: node("n1"),
      over: { resources: res(100, 0, 101 * GB) },
      codes: ["busy"],
      available: true,
    },
    {
      name: "a node that ran the job twice",
      node: node("n1"),
      over: { executions: [exec("e1", "n1", "Failed"), exec("e2", "n1", "Failed")] },
      codes: ["executed-twice"],
      messages: ["job already executed on this node more than once"],
      available: true,
    },
    {
      name: "a node running the job (batch)",
      node: node("n1"),
      over: { count: 2, executions: [exec("e1", "n1", "Running", { partitionIndex: 0 })] },
      codes: ["has-execution"],
      available: true,
    },
    {
      name: "a node where the job completed (batch)",
      node: node("n1"),
      over: { count: 2, executions: [exec("e1", "n1", "Completed", { partitionIndex: 0 })] },
      codes: ["has-execution"],
      available: true,
    },
    {
      name: "a node that refused to bid",
      node: node("n1"),
      over: { executions: [exec("e1", "n1", "AskForBidRejected")] },
      codes: ["bid-rejected"],
      messages: ["node rejected the job's bid"],
      available: true,
    },
    {
      name: "a node that refused to bid, saying why: its reason after Bacalhau's words",
      node: node("n1"),
      over: {
        executions: [{ ...exec("e1", "n1", "AskForBidRejected"), refusal: "volume /srv/private is not allowlisted" }],
      },
      codes: ["bid-rejected"],
      messages: ["node rejected the job's bid: volume /srv/private is not allowlisted"],
      available: true,
    },
    {
      name: "a node that never answered the job's work (batch, service): out, as after a refused bid",
      node: node("n1"),
      over: { executions: [{ ...exec("e1", "n1", "Failed"), unanswered: true }] },
      codes: ["unanswered"],
      messages: ["node did not answer the job's work"],
      available: true,
    },
    {
      name: "a node with any execution of an ops job",
      node: node("n1"),
      over: { type: "ops", executions: [exec("e1", "n1", "Failed")] },
      codes: ["has-execution"],
      available: true,
    },
    {
      name: "a node with any execution of a daemon job",
      node: node("n1"),
      over: { type: "daemon", executions: [exec("e1", "n1", "Cancelled")] },
      codes: ["has-execution"],
      available: true,
    },
    {
      name: "every reason at once",
      node: node("n1", { type: "Requester", membership: "PENDING", health: "UNKNOWN", engines: [], labels: {} }),
      over: { constraints: [c("zone", "exists")] },
      ledger: ledgerOf([{ nodeId: "n1", resources: res(2000) }]),
      codes: ["not-compute", "not-approved", "not-healthy", "engine", "labels", "busy"],
      available: false,
    },
  ];

  it.each(cases)("$name", ({ node: n, over, ledger, codes, messages, available }) => {
    const v = verdictOf(n, over, ledger);
    expect(v.rejections.map((r) => r.code)).toEqual(codes);
    if (messages) expect(v.rejections.map((r) => r.message)).toEqual(messages);
    expect(v.suitable).toBe(false);
    expect(v.available).toBe(available);
  });

  it("passes an approved, healthy Compute node that matches and has room", () => {
    const v = verdictOf(node("n1", { engines: ["Docker"], labels: { zone: "a", cores: "16" } }), {
      constraints: [c("zone", "in", "a", "b"), c("cores", "gt", "8"), c("gpu", "!")],
    });
    expect(v).toMatchObject({ suitable: true, available: true, rejections: [] });
    const reads = node("n1", { storageSources: ["LocalDirectory", "urlDownload"] });
    expect(verdictOf(reads, { storageTypes: ["localDirectory"] })).toMatchObject({ suitable: true });
    expect(verdictOf(node("n1", { publishers: ["Local"] }), { publisher: "local" })).toMatchObject({ suitable: true });
    // A job that publishes nothing goes to a node without publishers.
    expect(verdictOf(node("n1"))).toMatchObject({ suitable: true });
  });

  it("marks busy and not-healthy retryable, a wrong engine or labels not", () => {
    const busy = verdictOf(node("n1"), {}, ledgerOf([{ nodeId: "n1", resources: res(2000) }]));
    const sick = verdictOf(node("n1", { health: "UNHEALTHY" }));
    const engine = verdictOf(node("n1", { engines: ["wasm"] }));
    expect([busy, sick, engine].map((v) => v.rejections[0]?.retryable)).toEqual([true, true, false]);
  });

  it("lets a node whose one execution of a batch job failed take a retry, ranked below fresh nodes", () => {
    const request = job({ nodes: [node("a"), node("b")], executions: [exec("e1", "a", "Failed")] });
    const [a, b] = judgeNodes(request, jobSelectors([]), EMPTY_LEDGER);
    expect(a).toMatchObject({ nodeId: "a", suitable: true });
    expect(b).toMatchObject({ nodeId: "b", suitable: true });
    expect((a?.rank ?? 0) < (b?.rank ?? 0)).toBe(true);
  });
});

describe("job constraints", () => {
  it.each([
    [c("zone", "=", "a"), { zone: "a" }, true],
    [c("zone", "==", "a"), { zone: "b" }, false],
    [c("zone", "!=", "a"), {}, true],
    [c("zone", "in", "a", "b"), { zone: "b" }, true],
    [c("zone", "notin", "a", "b"), { zone: "b" }, false],
    [c("gpu", "exists"), { gpu: "" }, true],
    [c("gpu", "!"), { gpu: "x" }, false],
    [c("mem-gb", "gt", "32"), { "mem-gb": "64" }, true],
    [c("mem-gb", "gt", "32"), { "mem-gb": "32" }, false],
    [c("cores", "lt", "16"), { cores: "-3" }, true],
    // Kubernetes: a node value that is no integer never satisfies gt or lt.
    [c("cores", "lt", "16"), { cores: "8.5" }, false],
    [c("cores", "lt", "16"), {}, false],
    [c("big", "gt", "9223372036854775806"), { big: "9223372036854775807" }, true],
  ] as const)("%j on %j is %s", (constraint, labels, ok) => {
    const v = verdictOf(node("n1", { labels }), { constraints: [constraint] });
    expect(v.suitable).toBe(ok);
  });

  it.each([
    [c("", "exists"), "the key is empty"],
    [c("zone", "in"), "in needs at least one value"],
    [c("zone", "exists", "a"), "exists takes no values"],
    [c("zone", "=", "a", "b"), "= takes exactly one value"],
    [c("n", "gt", "1.5"), "gt needs an integer value"],
    [c("n", "gt", "9223372036854775808"), "gt needs an integer value"],
    [c("zone", "~", "a"), 'unknown operator "~"'],
  ])("refuses %j: %s", (constraint, problem) => {
    expect(constraintProblem(constraint)).toContain(problem);
    expect(() => placeJob(job({ nodes: [node("n1")], constraints: [constraint] }), EMPTY_LEDGER)).toThrow(
      PlacementInputError,
    );
  });

  it("ranks nodes matching a favour_ constraint first, without excluding the others", () => {
    const request = job({
      nodes: [node("a", { labels: { zone: "x" } }), node("b", { labels: { zone: "y" } })],
      constraints: [c("favour_zone", "=", "y")],
    });
    const result = placeJob(request, EMPTY_LEDGER);
    expect(result.placements.map((p) => p.nodeId)).toEqual(["b"]);
    expect(result.nodes.every((v) => v.suitable)).toBe(true);
  });
});
