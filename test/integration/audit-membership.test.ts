import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";
import { runShoal, waitFor } from "../support/shoal-process.ts";
import { basicAuth, usersApi, type Body } from "../support/users-api.ts";

/**
 * `shoal audit membership` and its route against a real orchestrator (its NATS, its SQLite store) on a manual clock:
 * two nodes ask to join under manual approval, bob approves one and rejects the other, and the approved one goes
 * silent until it is UNHEALTHY. The audit's times are checked against the events the feed serves.
 */
const TOKEN = "s3cret";
const DISCONNECT_MS = 10_000;
const USERS: AuthUser[] = [
  { Username: "bob", Password: "bob's password", Capabilities: [{ Actions: ["read:node", "write:node"] }] },
  { Username: "audit", Password: "audit's password", Capabilities: [{ Actions: ["read:history"] }] },
];
const BOB = basicAuth("bob", "bob's password");
const AUDITOR = basicAuth("audit", "audit's password");
const MEMBERSHIP = "/api/v1/orchestrator/audit/membership";

const nats = natsPerSuite();
const clock = new ManualClock(Date.parse("2026-11-29T09:00:00Z"));
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
/** The end of the window every test reads: the clock once the approved node was UNHEALTHY. */
let until: string;

const { call } = usersApi(() => orchestrator.apiUrl, AUDITOR);

const health = async (id: string) => (await call("GET", `/api/v1/orchestrator/nodes/${id}`, BOB)).body.Node?.Health;

/** A node's stored events as the feed serves them: the time of its first event of `type`. */
async function timeOf(nodeId: string, type: string): Promise<string> {
  const feed = await call("GET", `/api/v1/orchestrator/events?category=node&entity=${nodeId}&type=${type}`);
  expect(feed.status, feed.text).toBe(200);
  return feed.body.Items[0].time as string;
}

const ms = (time: string) => Date.parse(time);

beforeAll(async () => {
  config = orchestratorConfig(nats.url, {
    "Orchestrator.Auth.Token": TOKEN,
    "Orchestrator.NodeManager.ManualApproval": true,
    "Orchestrator.NodeManager.DisconnectTimeout": DISCONNECT_MS,
    "Orchestrator.NodeManager.UnknownTimeout": 3_600_000,
    "API.Auth.Users": USERS,
  });
  orchestrator = await startOrchestrator(config, silentLogger, { clock });
  // Past the grace after a start: from here on silence is the node's.
  await clock.advance(DISCONNECT_MS);
  for (const id of ["mem-approved", "mem-rejected"]) expect((await joinNode(nats.nc, id, TOKEN)).Accepted).toBe(true);
  await clock.advance(1_000);
  const approved = await call("PUT", "/api/v1/orchestrator/nodes/mem-approved", BOB, {
    Action: "approve",
    Message: "racked and checked",
  });
  expect(approved.status, approved.text).toBe(200);
  await clock.advance(1_000);
  const rejected = await call("PUT", "/api/v1/orchestrator/nodes/mem-rejected", BOB, {
    Action: "reject",
    Message: "unknown hardware",
  });
  expect(rejected.status, rejected.text).toBe(200);
  // Nobody heartbeats: the approved node is UNHEALTHY once its silence passes the timeout.
  for (let i = 0; i < 30 && (await health("mem-approved")) !== "UNHEALTHY"; i++) await clock.advance(1_000);
  await waitFor(
    async () => (await health("mem-approved")) === "UNHEALTHY",
    10_000,
    () => "mem-approved UNHEALTHY",
  );
  await clock.advance(5_000);
  until = new Date(clock.now()).toISOString();
}, 60_000);

afterAll(async () => {
  await orchestrator?.stop();
});

describe("GET /audit/membership", () => {
  it("says who let each node in or kept it out and why, and its health time adds up to the window", async () => {
    const res = await call("GET", `${MEMBERSHIP}?until=${until}`);
    expect(res.status, res.text).toBe(200);
    const rows = new Map((res.body.Items as Body[]).map((row) => [row.NodeID as string, row]));
    // node-0 is the orchestrator itself, a node of the cluster since it started.
    expect([...rows.keys()]).toEqual(["mem-approved", "mem-rejected", "node-0"]);
    // since defaults to the first stored event's time.
    expect(ms(res.body.Since)).toBeLessThanOrEqual(ms(await timeOf("mem-approved", "NodeRegistered")));
    expect(res.body.Until).toBe(until);

    const approved = rows.get("mem-approved")!;
    const joined = await timeOf("mem-approved", "NodeRegistered");
    const unhealthy = await timeOf("mem-approved", "NodeBecameUnhealthy");
    expect(approved).toMatchObject({
      Joined: joined,
      Membership: "APPROVED",
      By: "operator:bob",
      Reason: "racked and checked",
      HealthyMs: ms(unhealthy) - ms(joined),
      UnhealthyMs: ms(until) - ms(unhealthy),
      UnknownMs: 0,
    });
    expect(approved.Changes).toEqual([
      expect.objectContaining({ Event: "NodeRegistered", Membership: "PENDING", Time: joined }),
      {
        Event: "NodeApproved",
        Membership: "APPROVED",
        By: "operator:bob",
        Reason: "racked and checked",
        Time: await timeOf("mem-approved", "NodeApproved"),
      },
    ]);

    const rejected = rows.get("mem-rejected")!;
    const rejectedJoined = await timeOf("mem-rejected", "NodeRegistered");
    expect(rejected).toMatchObject({
      Joined: rejectedJoined,
      Membership: "REJECTED",
      By: "operator:bob",
      Reason: "unknown hardware",
    });
    expect(rejected.Changes.map((c: Body) => c.Event)).toEqual(["NodeRegistered", "NodeRejected"]);
    // Whatever its health did, every moment from its join to the end of the window is counted once.
    expect(rejected.HealthyMs + rejected.UnhealthyMs + rejected.UnknownMs).toBe(ms(until) - ms(rejectedJoined));
  });

  it("clips to a window that starts inside a node's history, for a node named by a unique prefix", async () => {
    const joined = ms(await timeOf("mem-approved", "NodeRegistered"));
    const unhealthy = ms(await timeOf("mem-approved", "NodeBecameUnhealthy"));
    const since = new Date(joined + 500).toISOString();
    const res = await call("GET", `${MEMBERSHIP}?since=${since}&until=${until}&node=mem-a`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.Items).toHaveLength(1);
    expect(res.body.Items[0]).toMatchObject({
      NodeID: "mem-approved",
      Joined: new Date(joined).toISOString(),
      HealthyMs: unhealthy - (joined + 500),
      UnhealthyMs: ms(until) - unhealthy,
      UnknownMs: 0,
    });
    // The join lies before the window; the approval inside it.
    expect(res.body.Items[0].Changes.map((c: Body) => c.Event)).toEqual(["NodeApproved"]);
  });

  it("pages the whole cluster by node id", async () => {
    const first = await call("GET", `${MEMBERSHIP}?until=${until}&limit=2`);
    expect(first.body.Items.map((n: Body) => n.NodeID)).toEqual(["mem-approved", "mem-rejected"]);
    expect(first.body.NextToken).toBe("mem-rejected");
    const second = await call("GET", `${MEMBERSHIP}?until=${until}&limit=2&next_token=mem-rejected`);
    expect(second.body.Items.map((n: Body) => n.NodeID)).toEqual(["node-0"]);
    expect(second.body.NextToken).toBe("");
  });

  it("refuses a bad window or node with a 400 naming the parameter, and callers without read:history", async () => {
    const later = new Date(clock.now() + 60_000).toISOString();
    const cases: [string, string, string][] = [
      ["since=yesterday", "since", "not an RFC 3339 time"],
      ["until=2026-11-29T10:00:00", "until", "not an RFC 3339 time"],
      [`since=${until}&until=${until}`, "since", "is not before until"],
      [`until=${later}`, "until", "later than now"],
      ["node=nobody", "node", "node not found: nobody"],
      ["node=mem-", "node", "multiple nodes found for prefix: mem-"],
      ["node=mem-approved&limit=1", "limit", "pages are for every node"],
    ];
    for (const [query, field, message] of cases) {
      const res = await call("GET", `${MEMBERSHIP}?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.Message, query).toContain(`query parameter ${field}`);
      expect(res.body.Message, query).toContain(message);
    }
    expect((await call("GET", MEMBERSHIP, BOB)).status).toBe(403);
  });
});

describe("shoal audit membership", () => {
  it("prints the table with who and why and the durations, and the API's answer as json", async () => {
    const api = [
      "--api-port",
      new URL(orchestrator.apiUrl).port,
      "--username",
      "audit",
      "--password",
      "audit's password",
    ];
    const table = await runShoal(["audit", "membership", "--until", until, ...api]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^From \d{4}-\d\d-\d\d \d\d:\d\d:\d\d to /);
    expect(lines[1]).toMatch(/^NODE\s+JOINED\s+MEMBERSHIP\s+BY\s+REASON\s+HEALTHY\s+UNHEALTHY\s+UNKNOWN$/);
    // JOINED is a local date and time (two words) in a table.
    expect(lines[2]).toMatch(
      /^mem-approved\s+\S+ \S+\s+APPROVED\s+operator:bob\s+racked and checked\s+\S+s\s+\S+s\s+0s$/,
    );
    expect(lines[3]).toMatch(/^mem-rejected\s+\S+ \S+\s+REJECTED\s+operator:bob\s+unknown hardware\s/);
    expect(lines[4]).toMatch(/^node-0\s/);

    const json = await runShoal([
      "audit",
      "membership",
      "--until",
      until,
      "--node",
      "mem-r",
      "--output",
      "json",
      ...api,
    ]);
    expect(json.code, json.stderr).toBe(0);
    const body = JSON.parse(json.stdout) as Body;
    expect(body).toEqual((await call("GET", `${MEMBERSHIP}?until=${until}&node=mem-rejected`)).body);

    const wrong = await runShoal(["audit", "membership", "--node", "nobody", ...api]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("--node: node not found: nobody");
  });
});
