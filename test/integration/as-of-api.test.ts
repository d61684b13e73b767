import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { silentLogger } from "../support/fixtures.ts";
import { runShoal } from "../support/shoal-process.ts";
import { AsOfSeeds } from "../../src/snapshots/as-of-seeds.ts";
import { join } from "node:path";
import { systemClock } from "../../src/actors/clock.ts";
import { queryNodes, type ListNodesQuery } from "../../src/api/nodes/node-query.ts";
import { toNodeState } from "../../src/api/nodes/node-state.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { ClusterAsOf } from "../../src/projections/as-of/cluster-as-of.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { startQuietCluster, type QuietCluster } from "../support/quiet-cluster.ts";
import { storedEvents } from "../support/stored-events.ts";
import {
  ALICE,
  aliceAndBob,
  BOB,
  loginFlags,
  submitQueuedJob,
  usersApi,
  type Body,
  type UsersApi,
} from "../support/users-api.ts";

/**
 * The cluster as of a moment over REST, against a real orchestrator: alice and bob act on nodes and jobs, the test
 * records what the live node and job reads answered at a moment t1 (and the store's last position then), acts again,
 * and then asks as_of=t1 and at_position: each answer is the one recorded, less what is live (LastHeartbeat).
 */

const NODES = "/api/v1/orchestrator/nodes";
const JOBS = "/api/v1/orchestrator/jobs";
const POSITION_HEADER = "x-shoal-as-of-position";

let cluster: QuietCluster;
let firstJob: string;
/** The moment the answers were recorded at, and the last stored position then. */
let t1: string;
let p1: number;
/** Every read asked at t1 (path and query) and what it answered. */
const recorded = new Map<string, { status: number; body: Body }>();

const api = usersApi(() => cluster.orchestrator.apiUrl, ALICE);
const dataDir = () => cluster.config.DataDir;
const { act } = api;
/** A call, with the position an as-of answer says it was folded to (null for a live answer). */
async function call(...args: Parameters<UsersApi["call"]>) {
  const res = await api.call(...args);
  return { ...res, position: res.headers.get(POSITION_HEADER) };
}

const pause = () => new Promise((r) => setTimeout(r, 20));

/** The reads recorded at t1 and asked again as of it. */
const READS = (job: string) => [
  NODES,
  `${NODES}?filter-approval=APPROVED`,
  `${NODES}?labels=zone%3Da`,
  `${NODES}?order_by=id&reverse=true`,
  `${NODES}?filter-cordoned=true`,
  `${NODES}?filter-status=HEALTHY&order_by=approval`,
  `${NODES}?limit=2`,
  `${NODES}/n-1`,
  `${NODES}/n-2`,
  `${NODES}/n-4`,
  JOBS,
  `${JOBS}?order_by=id`,
  `${JOBS}/${job}?include=executions,history`,
];

/**
 * A node's NodeState less its live field: the last heartbeat this process heard is not in the log. An error's request
 * id is the request's own.
 */
function withoutLive(body: Body): Body {
  if (body.RequestID !== undefined) return { ...body, RequestID: "" };
  const strip = (node: Body) => {
    const { LastHeartbeat: _, ...connection } = node.ConnectionState as Body;
    return { ...node, ConnectionState: connection };
  };
  if (Array.isArray(body.Nodes)) return { ...body, Nodes: (body.Nodes as Body[]).map(strip) };
  if (body.Node !== undefined) return { ...body, Node: strip(body.Node as Body) };
  return body;
}

const withQuery = (path: string, query: string) => `${path}${path.includes("?") ? "&" : "?"}${query}`;

const submitQueued = (who: string, name: string) => submitQueuedJob(api, who, name);

beforeAll(async () => {
  cluster = await startQuietCluster(aliceAndBob());
  for (const id of ["n-1", "n-2", "n-3", "n-4", "n-5"]) await cluster.join(id, { rack: id === "n-3" ? "r2" : "r1" });
  const node = (id: string) => `${NODES}/${id}`;
  await act(ALICE, node("n-1"), { Action: "approve", Message: "racked and checked" });
  await act(ALICE, node("n-2"), { Action: "approve" });
  await act(BOB, node("n-3"), { Action: "approve" });
  await act(ALICE, node("n-1"), { Action: "cordon", Message: "disk replacement" });
  await act(BOB, node("n-2"), { Action: "label", Labels: { zone: "a" } });
  await act(BOB, node("n-5"), { Action: "reject", Message: "unknown hardware" });
  firstJob = await submitQueued(ALICE, "first");

  for (const path of READS(firstJob)) {
    const res = await call("GET", path);
    expect(res.status, `${path}: ${res.text}`).toBe(200);
    recorded.set(path, { status: res.status, body: res.body });
  }
  const stored = await storedEvents(dataDir());
  p1 = stored[stored.length - 1]!.position;
  await pause();
  t1 = new Date().toISOString();
  await pause();
  // Nothing happened meanwhile that the answers would not show.
  expect((await storedEvents(dataDir())).at(-1)?.position).toBe(p1);

  await act(BOB, node("n-1"), { Action: "uncordon", Message: "disk replaced" });
  await act(ALICE, node("n-3"), { Action: "label", Labels: { zone: "a" } });
  await act(BOB, node("n-4"), { Action: "approve" });
  await act(ALICE, node("n-2"), { Action: "delete", Message: "retired" });
  await act(BOB, `${JOBS}/${firstJob}?reason=${encodeURIComponent("not needed")}`, undefined, "DELETE");
  await submitQueued(BOB, "second");
}, 60_000);

afterAll(() => cluster?.stop());

describe("as_of and at_position on the node and job reads", () => {
  it("as_of a recorded moment answers what the live reads answered then, folded up to the position stored then", async () => {
    for (const path of READS(firstJob)) {
      const then = recorded.get(path)!;
      const now = await call("GET", path);
      // The cluster moved on: the answer now is another one (but for the pending n-4's describe, approved since).
      if (!path.includes("filter-approval=APPROVED&") && path !== `${NODES}/n-4`)
        expect(withoutLive(now.body), `${path} now`).not.toEqual(withoutLive(then.body));
      const asOf = await call("GET", withQuery(path, `as_of=${encodeURIComponent(t1)}`));
      expect(asOf.status, `${path} as of ${t1}: ${asOf.text}`).toBe(200);
      expect(withoutLive(asOf.body), `${path} as of ${t1}`).toEqual(withoutLive(then.body));
      expect(asOf.position).toBe(String(p1));
      const atPosition = await call("GET", withQuery(path, `at_position=${p1}`));
      expect(withoutLive(atPosition.body), `${path} at ${p1}`).toEqual(withoutLive(then.body));
      expect(atPosition.position).toBe(String(p1));
    }
  });

  it("pages as of a moment with the cursor that page handed out", async () => {
    const first = await call("GET", `${NODES}?limit=2&as_of=${encodeURIComponent(t1)}`);
    expect(first.body.NextToken).not.toBe("");
    const second = await call("GET", `${NODES}?limit=2&next_token=${first.body.NextToken}&at_position=${p1}`);
    const all = recorded.get(NODES)!.body.Nodes as Body[];
    expect((second.body.Nodes as Body[]).map((n) => n.Info.NodeID)).toEqual(
      all.slice(2, 4).map((n) => n.Info.NodeID as string),
    );
  });

  it("shows what the log holds for the live fields: the heartbeat a health change recorded, else none", async () => {
    const node = (await call("GET", `${NODES}/n-1?as_of=${encodeURIComponent(t1)}`)).body.Node as Body;
    expect(node.ConnectionState.LastHeartbeat).toBeNull();
    expect(node.Info.ComputeNodeInfo).toMatchObject({
      AvailableCapacity: {},
      QueueCapacity: {},
      RunningExecutions: 0,
      EnqueuedExecutions: 0,
    });
    expect(node).toMatchObject({ Cordoned: true, Cordon: { Reason: "disk replacement", By: { id: "alice" } } });
  });

  it("at the newest position answers what the live reads answer now (no drift between the folds)", async () => {
    const head = (await storedEvents(dataDir())).at(-1)!.position;
    for (const path of READS(firstJob)) {
      const now = await call("GET", path);
      const atHead = await call("GET", withQuery(path, `at_position=${head}`));
      expect(atHead.status, `${path} at ${head}: ${atHead.text}`).toBe(now.status);
      // A 404 as of a moment says which moment lacks it.
      const expected =
        now.status === 404 ? { ...now.body, Message: `as of store position ${head}: ${now.body.Message}` } : now.body;
      expect(withoutLive(atHead.body), `${path} at ${head}`).toEqual(withoutLive(expected));
    }
  });

  it("before the first event the cluster is empty: empty lists, and a node or job not found", async () => {
    const before = `as_of=${encodeURIComponent("2020-01-01T00:00:00Z")}`;
    expect((await call("GET", `${NODES}?${before}`)).body).toEqual({ Nodes: [], NextToken: "" });
    expect((await call("GET", `${JOBS}?${before}`)).body).toEqual({ Items: [], NextToken: "" });
    expect((await call("GET", `${NODES}?at_position=0`)).body).toEqual({ Nodes: [], NextToken: "" });
    const node = await call("GET", `${NODES}/n-1?${before}`);
    expect(node.status).toBe(404);
    expect(node.position).toBeNull();
    // The message says it is the past that lacks it, not the cluster now.
    expect(node.body.Message).toBe("as of store position 0: node not found: n-1");
    const job = await call("GET", `${JOBS}/${firstJob}?${before}`);
    expect(job.status).toBe(404);
    expect(job.body.Message).toMatch(new RegExp(`^as of store position 0: job not found: ${firstJob} `));
    // And a node deleted since is found as of when it was there.
    expect((await call("GET", `${NODES}/n-2`)).status).toBe(404);
    expect((await call("GET", `${NODES}/n-2?at_position=${p1}`)).body.Node.Info.NodeID).toBe("n-2");
  });

  it("refuses bad moments with a 400 naming the parameter, and folds nothing", async () => {
    const head = (await storedEvents(dataDir())).at(-1)!.position;
    const cases: [string, string, RegExp][] = [
      ["as_of=yesterday", "as_of", /as_of: "yesterday" is not an RFC 3339 time/],
      ["as_of=2026-11-29T10:00:00", "as_of", /as_of: .* is not an RFC 3339 time with its offset/],
      ["as_of=2026-02-30T10:00:00Z", "as_of", /as_of: .* is not an RFC 3339 time/],
      [`as_of=${encodeURIComponent(t1)}&at_position=1`, "as_of", /as_of and at_position: give one of them/],
      [`at_position=${head + 1000}`, "at_position", new RegExp(`at_position: position ${head + 1000} is beyond`)],
      ["at_position=-1", "at_position", /at_position/],
      ["at_position=1.5", "at_position", /at_position/],
      ["as_of=2999-01-01T00:00:00Z", "as_of", /as_of: .* is later than now/],
    ];
    for (const path of [NODES, `${NODES}/n-1`, JOBS, `${JOBS}/${firstJob}`])
      for (const [query, field, message] of cases) {
        const res = await call("GET", withQuery(path, query));
        expect(res.status, `${path}?${query}: ${res.text}`).toBe(400);
        expect(res.body.message ?? res.body.Message ?? res.text, `${path}?${query}`).toMatch(message);
        expect(res.text).toContain(field);
      }
  });

  it("shoal node and job list/describe --as-of and --at-position print the as-of answers", async () => {
    const api = ["--api-port", new URL(cluster.orchestrator.apiUrl).port, ...loginFlags("alice")];
    const shoal = async (...args: string[]) => {
      const res = await runShoal([...args, ...api]);
      expect(res.code, `shoal ${args.join(" ")}: ${res.stderr}`).toBe(0);
      return res.stdout;
    };
    const json = async (...args: string[]) => JSON.parse(await shoal(...args, "--output", "json")) as Body;
    expect(withoutLive(await json("node", "list", "--as-of", t1))).toEqual(withoutLive(recorded.get(NODES)!.body));
    expect(withoutLive({ Node: await json("node", "describe", "n-2", "--at-position", String(p1)) })).toEqual(
      withoutLive(recorded.get(`${NODES}/n-2`)!.body),
    );
    const jobs = (recorded.get(JOBS)!.body.Items as Body[]).map((j) => j.ID as string);
    expect(jobs).toEqual([firstJob]);
    expect((await json("job", "list", "--as-of", t1)).map((j: Body) => j.ID)).toEqual(jobs);
    expect(await json("job", "describe", firstJob, "--at-position", String(p1))).toEqual(
      recorded.get(`${JOBS}/${firstJob}?include=executions,history`)!.body,
    );
    const table = await shoal("node", "list", "--as-of", t1);
    expect(table.split("\n")[0]).toBe(`As of ${t1}:`);
    expect(table).toMatch(/n-1 .* cordoned/);
    const paged = await shoal("node", "list", "--at-position", String(p1), "--limit", "2");
    expect(paged).toMatch(new RegExp(`More nodes: --next-token \\S+ --at-position ${p1}\\n?$`));
    const both = await runShoal(["node", "list", "--as-of", t1, "--at-position", "1", ...api]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give --as-of or --at-position, not both");
    // A watch redraws the list as it is now: the past does not change.
    for (const what of ["node", "job"]) {
      const watched = await runShoal([what, "list", "-w", "--as-of", t1, ...api]);
      expect(watched.code).toBe(2);
      expect(watched.stderr).toContain("--watch shows the list as it is now");
    }
    const late = await runShoal(["node", "list", "--at-position", String(p1 + 100_000), ...api]);
    expect(late.code).toBe(2);
    expect(late.stderr).toContain("--at-position: position");
  });

  // Last: it restarts the orchestrator.
  it("keeps the node-state snapshot a clean stop writes, and after a restart folds on from it as from the start", async () => {
    await cluster.orchestrator.stop();
    const seeds = new AsOfSeeds(AsOfSeeds.dirOf(dataDir()), 10, silentLogger);
    const stored = await storedEvents(dataDir());
    const head = stored.at(-1)!.position;
    const deadline = Date.now() + 5_000;
    while (!(await seeds.list()).some((s) => s.position === head)) {
      expect(Date.now(), "the snapshot kept at the head").toBeLessThan(deadline);
      await pause();
    }
    const captured = capturedLogger();
    cluster.orchestrator = await startOrchestrator(cluster.config, captured.logger);
    // The oracle: the same questions folded from the start by an as-of read model of its own over the same file.
    const file = new SqliteEventStore(join(dataDir(), "shoal.db"));
    try {
      const fromStart = new ClusterAsOf({ store: file, clock: systemClock, logger: silentLogger });
      const queries: [Record<string, string>, ListNodesQuery][] = [
        [{ limit: "100" }, { limit: 100 } as ListNodesQuery],
        [{ "filter-approval": "APPROVED" }, { "filter-approval": "APPROVED" } as ListNodesQuery],
        [{ order_by: "id", reverse: "true" }, { order_by: "id", reverse: true } as ListNodesQuery],
      ];
      for (const [params, query] of queries) {
        const served = await call("GET", `${NODES}?${new URLSearchParams({ ...params, at_position: String(head) })}`);
        const folded = await fromStart.nodes.read(head, (model) =>
          queryNodes(model.index, query, (view) => toNodeState(view, undefined)),
        );
        expect(served.body, JSON.stringify(params)).toEqual(JSON.parse(JSON.stringify(folded)));
      }
    } finally {
      await file.close();
    }
    expect(captured.messages("nodes folded").map((r) => r.from)).toContain(head);
    expect(captured.messages("not used")).toEqual([]);
  });
});
