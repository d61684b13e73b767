import { localTime } from "../../src/cli/local-time.ts";
import { Schema } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { AuditDiffResponse } from "../../src/api/audit/audit-diff-route.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { AuditDiff } from "../../src/projections/audit-diff/audit-diff.ts";
import { startQuietCluster, type QuietCluster } from "../support/quiet-cluster.ts";
import { runShoal } from "../support/shoal-process.ts";
import { quietMoment, storedEvents, storedStream } from "../support/stored-events.ts";
import {
  ALICE,
  aliceAndBob,
  apiUser,
  BOB,
  loginFlags,
  submitQueuedJob,
  usersApi,
  type Body,
} from "../support/users-api.ts";

/**
 * `GET /audit/diff` and `shoal audit diff` against a real orchestrator: alice and bob act on nodes and a job before a
 * moment t1, between t1 and t2, and after t2; the diff between t1 and t2 lists exactly the changes in between, in the
 * order they happened, with who and why.
 */

/** She may read nodes and jobs, not the history. */
const CAROL = apiUser("carol", "carol's password", ["read:node", "read:job"]);
const NODES = "/api/v1/orchestrator/nodes";
const JOBS = "/api/v1/orchestrator/jobs";
const DIFF = "/api/v1/orchestrator/audit/diff";

let cluster: QuietCluster;
let job: string;
let t1: string;
let t2: string;
let p1: number;
let p2: number;

const api = usersApi(() => cluster.orchestrator.apiUrl, ALICE);
const dataDir = () => cluster.config.DataDir;
const { call, act } = api;
const node = (id: string) => `${NODES}/${id}`;
const pause = () => new Promise((r) => setTimeout(r, 20));
const head = async () => (await storedEvents(dataDir())).at(-1)!.position;

const moment = () => quietMoment(dataDir());

const submitQueued = (who: string, name: string) => submitQueuedJob(api, who, name);

beforeAll(async () => {
  cluster = await startQuietCluster([...aliceAndBob(["read:history"]), CAROL.entry]);
  for (const id of ["n-1", "n-2", "n-3", "n-4"]) await cluster.join(id, { rack: "r1" });
  // Before t1: not in the diff.
  await act(ALICE, node("n-1"), { Action: "approve", Message: "racked before" });
  await act(ALICE, node("n-2"), { Action: "approve" });
  await act(ALICE, node("n-1"), { Action: "cordon", Message: "cordoned before" });
  ({ time: t1, position: p1 } = await moment());

  // Between t1 and t2.
  await act(ALICE, node("n-2"), { Action: "cordon", Message: "disk replacement" });
  await act(ALICE, node("n-2"), { Action: "label", Labels: { zone: "a", rack: "r7" } });
  await act(BOB, node("n-2"), { Action: "label", Labels: { zone: "b" }, RemoveLabels: ["rack"] });
  await act(ALICE, node("n-2"), { Action: "uncordon", Message: "disk replaced" });
  await act(BOB, node("n-3"), { Action: "approve", Message: "checked" });
  await act(ALICE, node("n-3"), { Action: "drain", Deadline: "10m", Message: "kernel upgrade" });
  // Nothing runs on n-3: the drain workflow ends the drain at once.
  const drained = Date.now() + 10_000;
  while (!(await storedStream(dataDir(), "node-n-3")).some((e) => e.type === "NodeDrainCompleted")) {
    expect(Date.now()).toBeLessThan(drained);
    await pause();
  }
  await act(BOB, node("n-4"), { Action: "reject", Message: "unknown hardware" });
  await cluster.join("n-5", { rack: "r2" });
  job = await submitQueued(ALICE, "diffed");
  await act(BOB, `${JOBS}/${job}?reason=${encodeURIComponent("not needed")}`, undefined, "DELETE");
  ({ time: t2, position: p2 } = await moment());

  // After t2: not in the diff.
  await act(BOB, node("n-1"), { Action: "uncordon", Message: "after" });
  await act(ALICE, node("n-3"), { Action: "label", Labels: { zone: "c" } });
  await act(ALICE, node("n-2"), { Action: "delete", Message: "retired" });
  await submitQueued(BOB, "later");
}, 60_000);

afterAll(() => cluster?.stop());

const q = (from: string | number, to: string | number) =>
  `${DIFF}?${new URLSearchParams({ from: String(from), to: String(to) })}`;
const brief = (changes: Body[]) => changes.map((c) => [c.Entity, c.Change, c.By, c.Reason]);

describe("GET /audit/diff", () => {
  it("lists every node and job change between t1 and t2, in order, with who and why; none before or after", async () => {
    const res = await call("GET", q(t1, t2));
    expect(res.status, res.text).toBe(200);
    const diff = res.body;
    // The body is what the route declares to OpenAPI.
    expect(() => Schema.decodeUnknownSync(AuditDiffResponse)(diff)).not.toThrow();
    expect(diff.From).toEqual({ Position: p1, Time: t1 });
    expect(diff.To).toEqual({ Position: p2, Time: t2 });
    expect(diff.Through).toBe(p2);
    expect(brief(diff.Nodes)).toEqual([
      ["n-2", "cordoned", "operator:alice", "disk replacement"],
      ["n-2", "labels", "operator:alice", ""],
      ["n-2", "labels", "operator:bob", ""],
      ["n-2", "uncordoned", "operator:alice", "disk replaced"],
      ["n-3", "approved", "operator:bob", "checked"],
      ["n-3", "drain started", "operator:alice", "kernel upgrade"],
      ["n-3", "drain completed", expect.stringMatching(/^workflow:/), expect.any(String)],
      ["n-4", "rejected", "operator:bob", "unknown hardware"],
      ["n-5", "joined", "node:n-5", expect.any(String)],
    ]);
    const [, alice, bob] = diff.Nodes as Body[];
    // The node reported rack=r1: alice's override changed it, bob's removal hid it; zone came and changed.
    expect(alice!.Details).toEqual({ Added: { zone: "a" }, Removed: {}, Changed: { rack: { From: "r1", To: "r7" } } });
    expect(bob!.Details).toEqual({ Added: {}, Removed: { rack: "r7" }, Changed: { zone: { From: "a", To: "b" } } });
    expect(diff.Nodes[4].Details).toEqual({ Previous: "PENDING" });
    expect(diff.Nodes[5].Details).toMatchObject({ KeepDaemon: false });
    expect(diff.Nodes[8].Details).toMatchObject({ Membership: "PENDING" });
    expect(brief(diff.Jobs)).toEqual([
      [job, "submitted", "operator:alice", expect.any(String)],
      [job, "stopped", "operator:bob", "not needed"],
    ]);
    expect(diff.Jobs[0].Details).toEqual({ Name: "diffed", Type: "batch" });
    // Each change names its event, at its position and time, all inside the window and in store order.
    const stored = new Map((await storedEvents(dataDir())).map((e) => [e.position, e]));
    const positions = [...diff.Nodes, ...diff.Jobs].map((c: Body) => c.Position as number);
    for (const c of [...diff.Nodes, ...diff.Jobs] as Body[]) {
      expect(c.Position).toBeGreaterThan(p1);
      expect(c.Position).toBeLessThanOrEqual(p2);
      expect(stored.get(c.Position)).toMatchObject({ type: c.Event, time: c.Time });
    }
    expect(new Set(positions).size).toBe(positions.length);
  });

  it("ends a window with more changes than an answer holds at Through, and goes on from there", async () => {
    const whole = (await call("GET", q(p1, p2))).body;
    const file = new SqliteEventStore(join(dataDir(), "shoal.db"));
    try {
      const diff = new AuditDiff(file);
      const first = await diff.diff(p1, p2, 3);
      expect(first.nodes).toHaveLength(3);
      expect(first.through).toBe(first.nodes[2]!.Position);
      expect(first.through).toBeLessThan(p2);
      const rest = await diff.diff(first.through, p2, 1000);
      expect(rest.through).toBe(p2);
      expect([...first.nodes, ...rest.nodes]).toEqual(whole.Nodes);
      expect([...first.jobs, ...rest.jobs]).toEqual(whole.Jobs);
    } finally {
      await file.close();
    }
  });

  it("takes store positions, or a time and a position, for the same window", async () => {
    const byTime = (await call("GET", q(t1, t2))).body;
    const byPosition = await call("GET", q(p1, p2));
    expect(byPosition.status, byPosition.text).toBe(200);
    expect(byPosition.body).toEqual({ ...byTime, From: { Position: p1 }, To: { Position: p2 } });
    const mixed = (await call("GET", q(p1, t2))).body;
    expect(mixed).toEqual({ ...byTime, From: { Position: p1 } });
  });

  it("from before the first event is the empty cluster: every node joined", async () => {
    const res = await call("GET", q("2020-01-01T00:00:00Z", t1));
    expect(res.status, res.text).toBe(200);
    expect(res.body.From).toEqual({ Position: 0, Time: "2020-01-01T00:00:00.000Z" });
    // The orchestrator is a node of its own cluster, the first to join.
    const first = (await storedEvents(dataDir())).find((e) => e.type === "NodeRegistered")!;
    const self = (first.data as { NodeID: string }).NodeID;
    expect(self).not.toMatch(/^n-/);
    expect(brief(res.body.Nodes).map(([entity, change]) => `${entity} ${change}`)).toEqual([
      `${self} joined`,
      "n-1 joined",
      "n-2 joined",
      "n-3 joined",
      "n-4 joined",
      "n-1 approved",
      "n-2 approved",
      "n-1 cordoned",
    ]);
    expect(res.body.Jobs).toEqual([]);
  });

  it("refuses bad moments with a 400 naming the parameter, and needs read:history", async () => {
    const newest = await head();
    const cases: [string, string, RegExp][] = [
      [q("yesterday", t2), "from", /from: "yesterday" is neither a store position nor an RFC 3339 time/],
      [q(t1, "2026-11-29T10:00:00"), "to", /to: .* is neither a store position nor an RFC 3339 time/],
      [q(t1, "2026-02-30T10:00:00Z"), "to", /to: .*RFC 3339/],
      [q(t2, t1), "from", /from: .* is not before to/],
      [q(p2, p1), "from", /from: .* is not before to/],
      [q(p1, p1), "from", /from: .* is not before to/],
      [q(t1, newest + 1000), "to", new RegExp(`to: position ${newest + 1000} is beyond the newest event`)],
      [q(t1, "2999-01-01T00:00:00Z"), "to", /to: .* is later than now/],
      [`${DIFF}?from=${p1}`, "to", /to/],
      [`${q(p1, p2)}&limit=5`, "limit", /limit/],
    ];
    for (const [path, field, message] of cases) {
      const res = await call("GET", path);
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(res.body.message ?? res.body.Message ?? res.text, path).toMatch(message);
      expect(res.text, path).toContain(field);
    }
    expect((await call("GET", q(p1, p2), CAROL.authorization)).status).toBe(403);
    const openapi = (await call("GET", "/api/v1/openapi.json")).body;
    expect(openapi.paths[DIFF].get.operationId).toBe("auditDiff");
  });
});

describe("shoal audit diff", () => {
  const api = () => ["--api-port", new URL(cluster.orchestrator.apiUrl).port, ...loginFlags("bob")];

  it("prints the changes grouped by nodes and jobs, and json/yaml as the route's body", async () => {
    const table = await runShoal(["audit", "diff", t1, t2, ...api()]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split("\n");
    // Tables show local time (the CLI runs in this process's TZ).
    const [from, to] = [localTime(new Date(t1)), localTime(new Date(t2))];
    expect(lines[0]).toBe(`Changes after ${from} (position ${p1}) up to ${to} (position ${p2}):`);
    const nodes = lines.indexOf("Nodes");
    const jobs = lines.indexOf("Jobs");
    expect(nodes).toBeGreaterThan(0);
    expect(jobs).toBeGreaterThan(nodes);
    expect(lines[nodes + 1]).toMatch(/^TIME +ENTITY +CHANGE +BY +REASON$/);
    const nodeLines = lines.slice(nodes + 2, jobs).filter((l) => l !== "");
    expect(nodeLines).toHaveLength(9);
    expect(nodeLines[0]).toMatch(/ n-2 +cordoned +operator:alice +disk replacement$/);
    expect(nodeLines[1]).toMatch(/ n-2 +labels \+zone=a rack=r1->r7 +operator:alice/);
    expect(nodeLines[2]).toMatch(/ n-2 +labels -rack zone=a->b +operator:bob/);
    expect(nodeLines[7]).toMatch(/ n-4 +rejected +operator:bob +unknown hardware$/);
    expect(lines.slice(jobs + 2).filter((l) => l !== "")[1]).toMatch(
      new RegExp(` ${job} +stopped +operator:bob +not needed$`),
    );
    expect(table.stdout).not.toContain("cordoned before");
    expect(table.stdout).not.toContain("retired");

    const body = (await call("GET", q(t1, t2))).body;
    const json = await runShoal(["audit", "diff", t1, t2, "--output", "json", ...api()]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(body);
    const yaml = await runShoal(["audit", "diff", String(p1), String(p2), "--output", "yaml", ...api()]);
    expect(yaml.code, yaml.stderr).toBe(0);
    expect(yaml.stdout).toContain("Change: stopped");
  });

  it("exits 2 on bad arguments, the window the API refuses among them", async () => {
    for (const args of [
      ["audit", "diff", t1],
      ["audit", "diff", "yesterday", t2],
      ["audit", "diff", t1, t2, "extra"],
    ]) {
      const res = await runShoal([...args, ...api()]);
      expect(res.code, `${args.join(" ")}: ${res.stderr}`).toBe(2);
    }
    const bad = await runShoal(["audit", "diff", "--output", "xml", t1, t2, ...api()]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--output must be table, wide, json, yaml or csv");
    const backwards = await runShoal(["audit", "diff", t2, t1, ...api()]);
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toContain("is not before to");
  });
});
