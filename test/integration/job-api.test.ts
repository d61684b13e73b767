import { existsSync, rmSync } from "node:fs";
import { Schema } from "effect";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import {
  GetJobResponse,
  ListHistoryResponse,
  ListJobsResponse,
  PutJobResponse,
} from "../../src/api/jobs/job-routes.ts";
import { jobViewsSnapshotPath } from "../../src/snapshots/job-views-snapshot.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";
import { storedEvents } from "../support/stored-events.ts";

/**
 * Jobs over REST against a real orchestrator: real HTTP, real NATS, a real SQLite file, and a
 * restart from the same DataDir.
 */

const WRITER_KEY = "writer-key-0123456789abcdefghij";
const READER_KEY = "reader-key-0123456789abcdefghij";
const NODES_KEY = "nodes-key-0123456789abcdefghijk";
const USERS: AuthUser[] = [
  { Alias: "writer", APIKey: WRITER_KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] },
  { Alias: "reader", APIKey: READER_KEY, Capabilities: [{ Actions: ["read:job"] }] },
  { Alias: "nodes", APIKey: NODES_KEY, Capabilities: [{ Actions: ["read:node", "write:node"] }] },
];
const AS = { writer: WRITER_KEY, reader: READER_KEY, nodes: NODES_KEY };

type Body = Record<string, any>;

const job = (overrides: Record<string, unknown> = {}, task: Record<string, unknown> = {}) => ({
  Type: "batch",
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1", Parameters: ["echo", "hi"] } },
      ...task,
    },
  ],
  ...overrides,
});

function decodes(schema: Schema.Schema.Any, body: unknown): void {
  const decoded = Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown>, {
    onExcessProperty: "error",
    errors: "all",
  })(body);
  expect(decoded._tag === "Left" ? String(decoded.left) : "ok").toBe("ok");
}

let nats: TestNatsServer;
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;

async function call(method: string, path: string, key: string | undefined, body?: unknown) {
  const res = await fetch(`${orchestrator.apiUrl}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Body };
}

const submit = async (spec: unknown) => {
  const res = await call("PUT", "/api/v1/orchestrator/jobs", AS.writer, { Job: spec });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.JobID as string;
};
/**
 * With no compute node to run on, the placement workflow queues a job (the suite's QueueTimeout is 60 s): its settled
 * state.
 */
const queued = async (id: string): Promise<Body> => {
  let j: Body = {};
  await waitFor(
    async () =>
      (j = (await call("GET", `/api/v1/orchestrator/jobs/${id}`, AS.reader)).body.Job).State.StateType === "Queued",
    10_000,
    () => `job ${id} queued`,
  );
  return j;
};
const QUEUED_MESSAGE = /^Job queued\. not enough nodes to run job\. requested: 1, available: 0, suitable: 0\.$/;
const jobStreams = async () =>
  new Set((await storedEvents(config.DataDir)).filter((e) => e.stream.startsWith("job-")).map((e) => e.stream)).size;

beforeAll(async () => {
  nats = await TestNatsServer.start();
  config = orchestratorConfig(nats.url, {
    "API.Auth.Users": USERS,
    "JobDefaults.Batch.Task.Timeouts.QueueTimeout": 60_000,
  });
  orchestrator = await startOrchestrator(config, silentLogger);
});

afterAll(async () => {
  await orchestrator?.stop();
  await nats?.stop();
});

describe("PUT /api/v1/orchestrator/jobs", () => {
  it("stores a valid job and answers Bacalhau's PutJobResponse; GET shows it as models.Job", async () => {
    const before = Date.now();
    const res = await call("PUT", "/api/v1/orchestrator/jobs", AS.writer, {
      Job: job({ Name: "hello", Labels: { team: "a" }, ID: "mine" }),
    });
    expect(res.status).toBe(200);
    decodes(PutJobResponse, res.body);
    expect(res.body.JobID).toMatch(/^j-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(res.body.EvaluationID).toBe("");
    // The server owns ID: the caller's is ignored, and the warning says so.
    expect(res.body.Warnings.join("\n")).toMatch(/ID/);

    const got = await call("GET", `/api/v1/orchestrator/jobs/${res.body.JobID}`, AS.reader);
    expect(got.status).toBe(200);
    decodes(GetJobResponse, got.body);
    // Placed at once: no node can take it, so it is Queued (Revision 2).
    const j = await queued(res.body.JobID);
    expect(j).toMatchObject({
      ID: res.body.JobID,
      Name: "hello",
      Namespace: "default",
      Type: "batch",
      Count: 1,
      Labels: { team: "a" },
      Version: 1,
      Revision: 2,
    });
    expect(j.State.StateType).toBe("Queued");
    expect(j.State.Message).toMatch(QUEUED_MESSAGE);
    // Nanoseconds, as Bacalhau's.
    expect(j.CreateTime).toBeGreaterThanOrEqual(before * 1e6);
    expect(j.CreateTime).toBeLessThanOrEqual(Date.now() * 1e6);
    expect(j.ModifyTime).toBeGreaterThanOrEqual(j.CreateTime);
    // The configured JobDefaults.Batch.Task.Timeouts.QueueTimeout and Bacalhau's resource defaults are applied.
    expect(j.Tasks[0].Timeouts.QueueTimeout).toBe(60);
    expect(j.Tasks[0].Resources).toMatchObject({ CPU: "500m", Memory: "512mb" });
    expect(got.body.Executions).toBeUndefined();
    expect(got.body.History).toBeUndefined();
  });

  it("refuses an invalid job with every problem named, and stores nothing", async () => {
    const streams = await jobStreams();
    const res = await call("PUT", "/api/v1/orchestrator/jobs", AS.writer, {
      Job: {
        Type: "sometimes",
        Count: -1,
        Tasks: [{ Name: "main", Engine: { Type: "docker", Params: {} }, Resources: { CPU: "lots" } }],
      },
    });
    expect(res.status).toBe(400);
    const paths = (res.body.Details.problems as { path: string; message: string }[]).map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining(["Type", "Count", "Tasks[0].Engine.Params.Image", "Tasks[0].Resources.CPU"]),
    );
    // The message names them all too, for a client that shows only the message.
    for (const path of paths) expect(res.body.Message).toContain(path);
    expect(await jobStreams()).toBe(streams);
  });

  it("refuses a body that is not {Job}: clear 400, nothing stored", async () => {
    const streams = await jobStreams();
    const missing = await call("PUT", "/api/v1/orchestrator/jobs", AS.writer, { Spec: job() });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toMatch(/Job/);
    const notObject = await call("PUT", "/api/v1/orchestrator/jobs", AS.writer, { Job: "run something" });
    expect(notObject.status).toBe(400);
    expect(await jobStreams()).toBe(streams);
  });
});

describe("GET /api/v1/orchestrator/jobs", () => {
  const ids: string[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 5; i++)
      ids.push(
        await submit(
          job({ Name: `list-${i}`, Namespace: i % 2 === 0 ? "even" : "odd", Labels: { idx: String(i), kind: "list" } }),
        ),
      );
  });

  const page = async (query: string) => {
    const res = await call("GET", `/api/v1/orchestrator/jobs?${query}`, AS.reader);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    decodes(ListJobsResponse, res.body);
    return res.body as { Items: Body[]; NextToken: string };
  };
  const all = async (query: string, from = "") => {
    const out: string[] = [];
    let token = from;
    for (let n = 0; n < 20; n++) {
      const p = await page(`${query}&limit=2${token ? `&next_token=${token}` : ""}`);
      out.push(...p.Items.map((j) => j.ID as string));
      token = p.NextToken;
      if (!token) break;
    }
    return out;
  };

  it("pages by created_at (the default), reverse, and by id, with labels and namespace filters", async () => {
    const created = await all("labels=kind%3Dlist");
    expect(created).toEqual(ids);
    expect(await all("labels=kind%3Dlist&reverse=true")).toEqual([...ids].reverse());
    expect(await all("labels=kind%3Dlist&order_by=id")).toEqual([...ids].sort());
    expect(await all("labels=kind%3Dlist&namespace=even")).toEqual([ids[0], ids[2], ids[4]]);
    expect(await all("labels=idx%20in%20(1,3)")).toEqual([ids[1], ids[3]]);
  });

  it("keeps a cursor valid while jobs are added", async () => {
    const first = await page("labels=kind%3Dlist&limit=2");
    const later = await submit(job({ Name: "later", Labels: { kind: "list" } }));
    const rest = await all("labels=kind%3Dlist", first.NextToken);
    expect([...first.Items.map((j) => j.ID), ...rest]).toEqual([...ids, later]);
  });

  it("refuses bad parameters with a 400", async () => {
    for (const query of [
      "limit=0",
      "limit=abc",
      "order_by=name",
      "reverse=maybe",
      "next_token=zzz",
      "labels=a%20in%20(",
      "colour=blue",
    ]) {
      const res = await call("GET", `/api/v1/orchestrator/jobs?${query}`, AS.reader);
      expect(res.status, query).toBe(400);
    }
    const token = (await page("limit=1")).NextToken;
    expect((await call("GET", `/api/v1/orchestrator/jobs?order_by=id&next_token=${token}`, AS.reader)).status).toBe(
      400,
    );
  });
});

describe("DELETE, history and executions", () => {
  it("stops a job with its reason; stopping it again changes nothing; unknown ids are 404", async () => {
    const nc = await connect({ servers: nats.url });
    const subjects: string[] = [];
    const sub = nc.subscribe("shoal.events.job.>", { callback: (_err, msg) => subjects.push(msg.subject) });
    await nc.flush();
    const id = await submit(job({ Name: "to-stop" }));
    await queued(id);
    const stop = await call("DELETE", `/api/v1/orchestrator/jobs/${id}?reason=no%20longer%20needed`, AS.writer);
    expect(stop.status).toBe(200);
    expect(stop.body).toEqual({ EvaluationID: "" });
    const got = await call("GET", `/api/v1/orchestrator/jobs/${id}`, AS.reader);
    expect(got.body.Job.State).toEqual({ StateType: "Stopped", Message: "no longer needed" });
    expect(got.body.Job.Revision).toBe(3);
    const events = (await storedEvents(config.DataDir)).filter((e) => e.stream === `job-${id}`);
    expect(events.map((e) => e.type)).toEqual(["JobSubmitted", "JobQueued", "JobStopped"]);
    expect(events[2]!.metadata).toMatchObject({
      actor: { type: "operator", id: "writer" },
      reason: "no longer needed",
    });

    // Stored, then published on NATS, in order.
    await waitFor(
      () => subjects.filter((s) => s.includes(id)).length >= 3,
      10_000,
      () => `published: ${subjects.join(", ")}`,
    );
    expect(subjects.filter((s) => s.includes(id))).toEqual([
      `shoal.events.job.${id}.JobSubmitted`,
      `shoal.events.job.${id}.JobQueued`,
      `shoal.events.job.${id}.JobStopped`,
    ]);
    sub.unsubscribe();
    await nc.close();

    const again = await call("DELETE", `/api/v1/orchestrator/jobs/${id}`, AS.writer);
    expect(again.status).toBe(200);
    expect((await call("GET", `/api/v1/orchestrator/jobs/${id}`, AS.reader)).body.Job.Revision).toBe(3);

    for (const unknown of ["j-00000000-0000-4000-8000-000000000000", "nope"]) {
      expect((await call("DELETE", `/api/v1/orchestrator/jobs/${unknown}`, AS.writer)).status).toBe(404);
      expect((await call("GET", `/api/v1/orchestrator/jobs/${unknown}`, AS.reader)).status).toBe(404);
      expect((await call("GET", `/api/v1/orchestrator/jobs/${unknown}/history`, AS.reader)).status).toBe(404);
      expect((await call("GET", `/api/v1/orchestrator/jobs/${unknown}/executions`, AS.reader)).status).toBe(404);
    }
  });

  it("serves the history (job level, filtered, paged) and the executions, alone and with include", async () => {
    const id = await submit(job({ Name: "history" }));
    const { State } = await queued(id);
    await call("DELETE", `/api/v1/orchestrator/jobs/${id}?reason=done%20here`, AS.writer);
    const history = await call("GET", `/api/v1/orchestrator/jobs/${id}/history`, AS.reader);
    expect(history.status).toBe(200);
    decodes(ListHistoryResponse, history.body);
    const items = history.body.Items as Body[];
    expect(items.map((h) => [h.Type, h.JobState, h.Event.Topic, h.Event.Message])).toEqual([
      ["JobLevel", { Previous: "Undefined", New: "Pending" }, "Submission", "Job submitted"],
      ["JobLevel", { Previous: "Pending", New: "Queued" }, "Queueing", State.Message],
      ["JobLevel", { Previous: "Queued", New: "Stopped" }, "Scheduling", "Job requested to stop before completion"],
    ]);
    // Who acted and why, from the events' metadata: the writer submitted and stopped, the placement workflow queued.
    expect(items.map((h) => h.Event.Details)).toEqual([
      { Actor: "operator:writer" },
      { Actor: "workflow:jobs", Reason: "the job was submitted" },
      { Actor: "operator:writer", Reason: "done here" },
    ]);
    expect(items[0]!.SeqNum).toBeLessThan(items[1]!.SeqNum);
    expect(items[1]!.SeqNum).toBeLessThan(items[2]!.SeqNum);

    const first = await call("GET", `/api/v1/orchestrator/jobs/${id}/history?limit=2`, AS.reader);
    expect(first.body.Items).toHaveLength(2);
    const second = await call(
      "GET",
      `/api/v1/orchestrator/jobs/${id}/history?limit=2&next_token=${first.body.NextToken}`,
      AS.reader,
    );
    expect(second.body.Items.map((h: Body) => h.SeqNum)).toEqual([items[2]!.SeqNum]);
    expect(second.body.NextToken).toBe("");
    expect(
      (await call("GET", `/api/v1/orchestrator/jobs/${id}/history?event_type=execution`, AS.reader)).body.Items,
    ).toEqual([]);
    expect(
      (
        await call(
          "GET",
          `/api/v1/orchestrator/jobs/${id}/history?since=${Math.floor(Date.now() / 1000) + 3600}`,
          AS.reader,
        )
      ).body.Items,
    ).toEqual([]);
    for (const bad of ["event_type=node", "since=yesterday", "next_token=abc", "limit=0"]) {
      expect((await call("GET", `/api/v1/orchestrator/jobs/${id}/history?${bad}`, AS.reader)).status, bad).toBe(400);
    }

    const executions = await call("GET", `/api/v1/orchestrator/jobs/${id}/executions`, AS.reader);
    expect(executions).toEqual({ status: 200, body: { Items: [], NextToken: "" } });
    const full = await call("GET", `/api/v1/orchestrator/jobs/${id}?include=executions,history`, AS.reader);
    decodes(GetJobResponse, full.body);
    expect(full.body.Executions).toEqual({ Items: [], NextToken: "" });
    expect(full.body.History.Items).toEqual(items);
    expect((await call("GET", `/api/v1/orchestrator/jobs/${id}?include=everything`, AS.reader)).status).toBe(400);
  });

  // (TotalTimeout is proven on a running job, test/e2e/job-run.test.ts: here nothing runs, and a queued job's
  // QueueTimeout comes first.)
  it("fails a job past its QueueTimeout with the queue reason (its deadline is armed on the core)", async () => {
    const id = await submit(job({ Name: "timeout" }, { Timeouts: { TotalTimeout: 2, QueueTimeout: 1 } }));
    await waitFor(
      async () =>
        (await call("GET", `/api/v1/orchestrator/jobs/${id}`, AS.reader)).body.Job.State.StateType === "Failed",
      30_000,
      () => "job failed",
    );
    const j = (await call("GET", `/api/v1/orchestrator/jobs/${id}`, AS.reader)).body.Job;
    expect(j.State.Message).toMatch(/^not enough nodes to run job\. requested: 1, available: 0, suitable: 0\.$/);
  });
});

describe("capabilities", () => {
  it("needs write:job to submit or stop, read:job (or anonymous read) to read", async () => {
    const id = await submit(job({ Name: "auth" }));
    expect((await call("PUT", "/api/v1/orchestrator/jobs", AS.reader, { Job: job() })).status).toBe(403);
    expect((await call("PUT", "/api/v1/orchestrator/jobs", AS.nodes, { Job: job() })).status).toBe(403);
    expect((await call("PUT", "/api/v1/orchestrator/jobs", undefined, { Job: job() })).status).toBe(401);
    expect((await call("DELETE", `/api/v1/orchestrator/jobs/${id}`, AS.reader)).status).toBe(403);
    expect((await call("DELETE", `/api/v1/orchestrator/jobs/${id}`, undefined)).status).toBe(401);
    expect((await call("GET", `/api/v1/orchestrator/jobs/${id}`, AS.reader)).status).toBe(200);
    // Bacalhau's default: anonymous callers may read.
    expect((await call("GET", `/api/v1/orchestrator/jobs/${id}`, undefined)).status).toBe(200);
    expect((await call("GET", `/api/v1/orchestrator/jobs/${id}`, AS.nodes)).status).toBe(403);
    expect((await queued(id)).State.StateType).toBe("Queued");
  });

  it("lists the job routes in the OpenAPI document", async () => {
    const doc = (await call("GET", "/api/v1/openapi.json", undefined)).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/orchestrator/jobs",
        "/api/v1/orchestrator/jobs/{id}",
        "/api/v1/orchestrator/jobs/{id}/history",
        "/api/v1/orchestrator/jobs/{id}/executions",
      ]),
    );
    expect(doc.paths["/api/v1/orchestrator/jobs"].put.operationId).toBe("putJob");
    expect(doc.paths["/api/v1/orchestrator/jobs/{id}"].delete.operationId).toBe("stopJob");
  });
});

describe("restart", () => {
  it("keeps every job, its state, its history, and arms its deadlines again", async () => {
    const pending = await submit(job({ Name: "survivor", Labels: { kind: "survivor" } }));
    const timed = await submit(
      job({ Name: "timed-survivor", Labels: { kind: "survivor" } }, { Timeouts: { TotalTimeout: 5, QueueTimeout: 1 } }),
    );
    await queued(pending);
    const before = {
      list: (await call("GET", "/api/v1/orchestrator/jobs?limit=1000", AS.reader)).body,
      history: (await call("GET", `/api/v1/orchestrator/jobs/${pending}/history`, AS.reader)).body,
    };
    await orchestrator.stop();
    orchestrator = await startOrchestrator(config, silentLogger);
    const list = (await call("GET", "/api/v1/orchestrator/jobs?limit=1000", AS.reader)).body;
    // The timed job may have failed by now (its deadline passed while the orchestrator was down or since).
    const strip = (b: Body) => b.Items.filter((j: Body) => j.ID !== timed);
    expect(strip(list)).toEqual(strip(before.list));
    expect((await call("GET", `/api/v1/orchestrator/jobs/${pending}/history`, AS.reader)).body).toEqual(before.history);
    await waitFor(
      async () =>
        (await call("GET", `/api/v1/orchestrator/jobs/${timed}`, AS.reader)).body.Job.State.StateType === "Failed",
      30_000,
      () => "timed job failed after restart",
    );
    // And the restarted orchestrator takes new work.
    const after = await submit(job({ Name: "after-restart" }));
    expect((await call("GET", `/api/v1/orchestrator/jobs/${after}`, AS.reader)).status).toBe(200);

    // That start was from the job-views snapshot of the clean stop; without one (a kill -9 before
    // any clean stop) the store is folded from its start, to the same views.
    const fromSnapshot = (await call("GET", "/api/v1/orchestrator/jobs?limit=1000", AS.reader)).body;
    await orchestrator.stop();
    expect(existsSync(jobViewsSnapshotPath(config.DataDir))).toBe(true);
    rmSync(jobViewsSnapshotPath(config.DataDir));
    orchestrator = await startOrchestrator(config, silentLogger);
    expect((await call("GET", "/api/v1/orchestrator/jobs?limit=1000", AS.reader)).body).toEqual(fromSnapshot);
    expect((await call("GET", `/api/v1/orchestrator/jobs/${pending}/history`, AS.reader)).body).toEqual(before.history);
  });
});
