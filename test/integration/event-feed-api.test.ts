import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { startQuietCluster, type QuietCluster } from "../support/quiet-cluster.ts";
import { dataIds, openSse } from "../support/sse-client.ts";
import { storedEvents } from "../support/stored-events.ts";
import { ALICE, aliceAndBob, apiUser, BOB, submitQueuedJob, usersApi, type Body } from "../support/users-api.ts";

/**
 * The cluster's history over REST against a real orchestrator: alice and bob act on nodes and jobs through the API,
 * and the feed is held to a plain read of the SQLite file filtered by hand.
 */

const AUDITOR = apiUser("audit", "audit password", ["read:history"], "auditor");
/** Reads nodes and jobs, not their history. */
const NOSY = apiUser("nosy", "nosy password", ["read:node", "read:job"]);
const FEED = "/api/v1/orchestrator/events";
const NDJSON = "application/x-ndjson";
const ENTITY_CATEGORIES = ["node", "job", "execution"];

interface Page {
  Items: RecordedEvent[];
  NextToken: string;
}

let cluster: QuietCluster;
let jobId: string;
/** A moment after everything the test did: windows end here, so a late background event changes no answer. */
let done: string;
/** A moment between alice's node actions and bob's. */
let between: number;

const api = usersApi(() => cluster.orchestrator.apiUrl, AUDITOR.authorization);
const { call, act } = api;
const dataDir = () => cluster.config.DataDir;

const feed = async (query: string): Promise<Page> => {
  const res = await call("GET", `${FEED}?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body as Page;
};

/** Every page of a query, following NextToken to the end. */
async function allPages(query: string): Promise<Page[]> {
  const pages: Page[] = [];
  let token = "";
  do {
    const page = await feed(`${query}${token === "" ? "" : `&next_token=${token}`}`);
    pages.push(page);
    token = page.NextToken;
  } while (token !== "");
  return pages;
}

const categoryOf = (e: RecordedEvent) => e.stream.slice(0, e.stream.indexOf("-"));
const actorOf = (e: RecordedEvent) => e.metadata.actor as { type: string; id: string };
/** The stored events, filtered by hand: what the feed must answer. */
async function stored(keep: (e: RecordedEvent) => boolean): Promise<string[]> {
  const until = Date.parse(done);
  return (await storedEvents(dataDir())).filter((e) => Date.parse(e.time) <= until && keep(e)).map((e) => e.id);
}
const ids = (events: readonly RecordedEvent[]) => events.map((e) => e.id);

beforeAll(async () => {
  cluster = await startQuietCluster([...aliceAndBob(), AUDITOR.entry, NOSY.entry]);
  for (const id of ["n-1", "n-2", "n-3", "n-4"]) await cluster.join(id);
  const node = (id: string) => `/api/v1/orchestrator/nodes/${id}`;
  await act(ALICE, node("n-1"), { Action: "approve", Message: "racked and checked" });
  await act(ALICE, node("n-2"), { Action: "approve" });
  await act(ALICE, node("n-1"), { Action: "cordon", Message: "disk replacement" });
  await act(ALICE, node("n-2"), { Action: "label", Labels: { zone: "a" } });
  await new Promise((r) => setTimeout(r, 20));
  between = Date.now();
  await new Promise((r) => setTimeout(r, 20));
  await act(BOB, node("n-3"), { Action: "approve" });
  await act(BOB, node("n-4"), { Action: "reject", Message: "unknown hardware" });
  jobId = await submitQueuedJob(api, ALICE, "fed");
  await act(BOB, `/api/v1/orchestrator/jobs/${jobId}?reason=${encodeURIComponent("not needed")}`, undefined, "DELETE");
  await new Promise((r) => setTimeout(r, 20));
  done = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 20));
});

afterAll(() => cluster?.stop());

describe("GET /api/v1/orchestrator/events", () => {
  it("actor=operator:alice is exactly alice's events, in store order", async () => {
    const page = await feed("actor=operator:alice&limit=1000");
    expect(page.NextToken).toBe("");
    const alices = await stored((e) => actorOf(e).type === "operator" && actorOf(e).id === "alice");
    expect(ids(page.Items)).toEqual(alices);
    expect(page.Items.map((e) => e.type)).toEqual(
      expect.arrayContaining(["NodeApproved", "NodeCordoned", "NodeLabelsSet", "JobSubmitted"]),
    );
    expect(page.Items.find((e) => e.type === "NodeCordoned")).toMatchObject({
      stream: "node-n-1",
      metadata: { actor: { type: "operator", id: "alice" }, reason: "disk replacement" },
    });
    const positions = page.Items.map((e) => e.position);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    // bob's are his own, and nobody else's are in either.
    const bobs = await feed("actor=operator:bob&limit=1000");
    expect(ids(bobs.Items)).toEqual(await stored((e) => actorOf(e).type === "operator" && actorOf(e).id === "bob"));
    expect(bobs.Items.map((e) => e.type)).toEqual(
      expect.arrayContaining(["NodeApproved", "NodeRejected", "JobStopped"]),
    );
    const both = await feed("actor=operator:alice,operator:bob&limit=1000");
    expect(new Set(ids(both.Items))).toEqual(new Set([...alices, ...ids(bobs.Items)]));
  });

  it("filters combine: each part must hold, each list takes any of its values", async () => {
    const cases: [string, (e: RecordedEvent) => boolean][] = [
      ["actor=operator:bob&type=NodeRejected", (e) => actorOf(e).id === "bob" && e.type === "NodeRejected"],
      ["category=node&entity=n-1&actor=operator", (e) => e.stream === "node-n-1" && actorOf(e).type === "operator"],
      [
        "category=job&actor=operator:alice&actor=operator:bob",
        (e) => categoryOf(e) === "job" && actorOf(e).type === "operator",
      ],
      [
        "type=NodeApproved,NodeRejected&actor=operator",
        (e) => ["NodeApproved", "NodeRejected"].includes(e.type) && actorOf(e).type === "operator",
      ],
      [`entity=${jobId}`, (e) => e.stream === `job-${jobId}`],
      ["entity=n-2&entity=n-3", (e) => e.stream === "node-n-2" || e.stream === "node-n-3"],
      ["actor=node", (e) => ENTITY_CATEGORIES.includes(categoryOf(e)) && actorOf(e).type === "node"],
      [
        "actor=workflow:jobs",
        (e) => ENTITY_CATEGORIES.includes(categoryOf(e)) && actorOf(e).type === "workflow" && actorOf(e).id === "jobs",
      ],
      ["category=workflow", (e) => categoryOf(e) === "workflow"],
      [
        `since=${new Date(between).toISOString()}&category=node`,
        (e) => categoryOf(e) === "node" && Date.parse(e.time) >= between,
      ],
      [
        `until=${new Date(between).toISOString()}&actor=operator`,
        (e) => actorOf(e).type === "operator" && Date.parse(e.time) <= between,
      ],
    ];
    for (const [query, keep] of cases) {
      const window = query.includes("until=") ? "" : `&until=${encodeURIComponent(done)}`;
      const page = await feed(`${query}${window}&limit=1000`);
      const expected = await stored(keep);
      expect(expected.length, query).toBeGreaterThan(0);
      expect(ids(page.Items), query).toEqual(expected);
    }
    // The job workflow queued the job; its stop is bob's.
    const job = await feed(`entity=${jobId}&limit=1000`);
    expect(job.Items.map((e) => [e.type, `${actorOf(e).type}:${actorOf(e).id}`])).toEqual(
      expect.arrayContaining([
        ["JobSubmitted", "operator:alice"],
        ["JobQueued", "workflow:jobs"],
        ["JobStopped", "operator:bob"],
      ]),
    );
    // Filters that hold for no event: an empty answer, not an error.
    expect(await feed("actor=operator:carol")).toEqual({ Items: [], NextToken: "" });
    expect(await feed("entity=nobody")).toEqual({ Items: [], NextToken: "" });
  });

  it("paging to the end by NextToken gives exactly one long read", async () => {
    const query = `until=${encodeURIComponent(done)}&category=node,job,execution,workflow`;
    const whole = await feed(`${query}&limit=1000`);
    expect(whole.NextToken).toBe("");
    expect(whole.Items.length).toBeGreaterThan(20);
    expect(ids(whole.Items)).toEqual(await stored(() => true));
    const pages = await allPages(`${query}&limit=3`);
    expect(pages.length).toBe(Math.ceil(whole.Items.length / 3));
    for (const page of pages.slice(0, -1)) expect(page.Items).toHaveLength(3);
    expect(pages.flatMap((p) => p.Items)).toEqual(whole.Items);
    // after= is where a page starts too.
    const third = whole.Items[2]!.position;
    expect(ids((await feed(`${query}&after=${third}&limit=1000`)).Items)).toEqual(ids(whole.Items.slice(3)));
  });

  it("NDJSON streams the whole selection: the pages concatenated, one event a line", async () => {
    for (const query of [`until=${encodeURIComponent(done)}`, "actor=operator:alice", `entity=${jobId}&category=job`]) {
      const pages = await allPages(`${query}&limit=2`);
      const res = await call("GET", `${FEED}?${query}`, undefined, undefined, NDJSON);
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
      expect(res.text.endsWith("\n")).toBe(true);
      const lines = res.text.slice(0, -1).split("\n");
      expect(
        lines.map((l) => JSON.parse(l)),
        query,
      ).toEqual(pages.flatMap((p) => p.Items));
    }
    // From a cursor on, and to nothing at all.
    const all = await allPages(`actor=operator&limit=1000`);
    const from = all[0]!.Items[1]!.position;
    const rest = await call("GET", `${FEED}?actor=operator&next_token=${from}`, undefined, undefined, NDJSON);
    expect(
      rest.text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual(all[0]!.Items.slice(2));
    const none = await call("GET", `${FEED}?actor=operator:carol`, undefined, undefined, NDJSON);
    expect([none.status, none.text]).toEqual([200, ""]);
  });

  it("answers each bad parameter with a 400 naming it, and changes nothing", async () => {
    const head = Math.max(...(await storedEvents(dataDir())).map((e) => e.position));
    const before = await storedEvents(dataDir());
    const bad: [string, RegExp][] = [
      ["categry=node", /categry/],
      ["category=nodes", /^query parameter category: unknown category "nodes"/],
      ["type=NodeApprovd", /^query parameter type: unknown event type "NodeApprovd"/],
      ["category=job&type=NodeApproved", /^query parameter type: NodeApproved is an event of category node/],
      ["actor=admin:alice", /^query parameter actor: "admin:alice" is not type\[:id\]/],
      ["actor=operator:", /^query parameter actor: "operator:" names no id/],
      ["since=2026-11-29T10:00:00", /^query parameter since: .*not an RFC 3339 time with an offset/],
      ["until=yesterday", /^query parameter until: "yesterday"/],
      ["since=2026-11-29T10:00:01Z&until=2026-11-29T10:00:00Z", /^query parameter since: .* is after until/],
      [`after=${head + 1000}`, /^query parameter after: position \d+ is beyond the newest event/],
      [`next_token=${head + 1000}`, /^query parameter next_token: position \d+ is beyond the newest event/],
      ["after=1&next_token=2", /^query parameter after: give after or next_token, not both/],
      ["after=-1", /after/],
      ["limit=0", /limit/],
      ["limit=1001", /limit/],
      [`type=${Array.from({ length: 21 }, (_, i) => `T${i}`).join(",")}`, /^query parameter type: at most 20 values/],
      [`entity=${"x".repeat(257)}`, /^query parameter entity: an id is at most 256 characters/],
    ];
    for (const [query, message] of bad) {
      const res = await call("GET", `${FEED}?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.Message, query).toMatch(message);
    }
    const ndjsonLimit = await call("GET", `${FEED}?limit=5`, undefined, undefined, NDJSON);
    expect(ndjsonLimit.status).toBe(400);
    expect(JSON.parse(ndjsonLimit.text).Message).toMatch(/^query parameter limit: NDJSON sends the whole selection/);
    expect(await storedEvents(dataDir())).toHaveLength(before.length);
  });

  it("needs read:history: read:node without it is 403, no credentials 401", async () => {
    expect((await call("GET", FEED, NOSY.authorization)).status).toBe(403);
    expect((await call("GET", `/api/v1/orchestrator/nodes/n-1/history`, NOSY.authorization)).status).toBe(403);
    expect((await call("GET", FEED, ALICE)).status).toBe(403);
    expect((await call("GET", FEED, null)).status).toBe(401);
    expect((await call("GET", FEED)).status).toBe(200);
  });
});

describe("GET /api/v1/orchestrator/events/stream", () => {
  const STREAM = `${FEED}/stream`;

  it("sends the feed's selection as Server-Sent Events, the same JSON as the feed's items", async () => {
    for (const query of ["actor=operator:alice", "category=node&entity=n-1,n-4", "category=job,execution"]) {
      const expected = await allPages(`${query}&limit=7`);
      const items = expected.flatMap((p) => p.Items);
      const client = await openSse(`${cluster.orchestrator.apiUrl}${STREAM}?${query}&after=0`, {
        headers: { authorization: AUDITOR.authorization },
      });
      try {
        expect(client.status).toBe(200);
        await client.until((m) => m.length >= items.length);
        expect(client.messages.map((m) => JSON.parse(m.data) as RecordedEvent)).toEqual(items);
        expect(dataIds(client.messages)).toEqual(items.map((e) => e.position));
      } finally {
        client.close();
      }
    }
  });

  it("needs read:history, and refuses a bad filter with the feed's 400", async () => {
    expect((await call("GET", STREAM, NOSY.authorization)).status).toBe(403);
    expect((await call("GET", STREAM, ALICE)).status).toBe(403);
    expect((await call("GET", STREAM, null)).status).toBe(401);
    const bad = await call("GET", `${STREAM}?actor=robot:x`);
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toMatch(/query parameter actor/);
  });

  it("is in the OpenAPI document as a text/event-stream of ClusterEvents with Last-Event-ID", async () => {
    const doc = (await call("GET", "/api/v1/openapi.json", null)).body;
    const op = doc.paths["/api/v1/orchestrator/events/stream"].get;
    expect(Object.keys(op.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(op.parameters.map((p: Body) => p.name)).toEqual(expect.arrayContaining(["Last-Event-ID", "after", "actor"]));
  });
});
