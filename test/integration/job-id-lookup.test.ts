import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { storedEvents } from "../support/stored-events.ts";

/**
 * `{id}` in the job routes as Bacalhau resolves it: a full id, a unique id prefix (the short form
 * `j-1a2b3c4d` its CLI and WebUI show), or a name in a namespace; and `job_version`. Real HTTP,
 * NATS and SQLite; no compute node (the jobs queue).
 */
const KEY = "lookup-key-0123456789abcdefghijk";
const USERS: AuthUser[] = [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] }];
const api = "/api/v1/orchestrator/jobs";

let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let config: ShoalConfig;
let dataDir = "";

const jobs = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);
/** Status and body, as the assertions compare them whole. */
const call = async (method: string, path: string) => {
  const { status, body } = await jobs.call(method, path);
  return { status, body };
};
const job = (overrides: Record<string, unknown> = {}) => ({
  Type: "batch",
  Tasks: [
    { Name: "main", Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1", Parameters: ["true"] } } },
  ],
  ...overrides,
});
const short = (id: string) => id.slice(0, "j-".length + 8);
const jobEvents = async () => (await storedEvents(dataDir)).filter((e) => e.stream.startsWith("job-")).length;

const ids: string[] = [];
let named = "";
let twinA = "";
let twinB = "";
let elsewhere = "";

beforeAll(async () => {
  nats = await TestNatsServer.start();
  config = orchestratorConfig(nats.url, {
    "API.Auth.Users": USERS,
    "JobDefaults.Batch.Task.Timeouts.QueueTimeout": 60_000,
  });
  dataDir = config.DataDir;
  orchestrator = await startOrchestrator(config, silentLogger);
  for (let i = 0; i < 4; i++) ids.push(await jobs.submit(job()));
  named = await jobs.submit(job({ Name: "nightly-report" }));
  twinA = await jobs.submit(job({ Name: "twin" }));
  // A name its namespace has is that job's (Bacalhau >= 1.8): submitted again with a change, it is updated.
  twinB = await jobs.submit(job({ Name: "twin", Labels: { copy: "b" } }));
  elsewhere = await jobs.submit(job({ Name: "twin", Namespace: "lab" }));
});

afterAll(async () => {
  await orchestrator?.stop();
  await nats?.stop();
});

describe("job ids in paths", () => {
  it("a unique prefix, such as the short id, names the job on every route", async () => {
    const all = [...ids, named, twinA, twinB, elsewhere];
    for (const id of ids) {
      const prefix = short(id);
      // Random ids: should another share the 8 hex digits, the prefix is ambiguous and must say so.
      const unique = all.filter((other) => other.startsWith(prefix)).length === 1;
      const got = await call("GET", `${api}/${prefix}?include=executions,history`);
      if (!unique) {
        expect(got.status).toBe(400);
        continue;
      }
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body.Job.ID).toBe(id);
      expect(got.body.History.Items[0].JobID).toBe(id);
      expect((await call("GET", `${api}/${prefix}/history`)).body.Items[0].JobID).toBe(id);
      expect((await call("GET", `${api}/${prefix}/executions`)).status).toBe(200);
    }
  });

  it("an ambiguous prefix is a 400 listing some of the matches; an unknown one a 404; nothing is stopped", async () => {
    const before = await jobEvents();
    for (const [method, path] of [
      ["GET", `${api}/j-`],
      ["GET", `${api}/j-/history`],
      ["GET", `${api}/j-/executions`],
      ["DELETE", `${api}/j-`],
    ] as const) {
      const res = await call(method, path);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.Code).toBe("BadRequest");
      expect(res.body.Message).toMatch(
        /^multiple jobs found for ID prefix j-: \[j-[0-9a-f-]+, j-[0-9a-f-]+, j-[0-9a-f-]+, \.\.\.\]$/,
      );
      expect(res.body.Hint).toBe("Use the full job ID");
      expect(res.body.Details.matches).toHaveLength(3);
    }
    for (const [method, path] of [
      ["GET", `${api}/j-zzzz`],
      ["GET", `${api}/j-zzzz/history`],
      ["DELETE", `${api}/j-zzzz`],
    ] as const) {
      const res = await call(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.Message).toBe(
        "job not found: j-zzzz (no job has this ID, ID prefix, or name in namespace default)",
      );
    }
    expect(await jobEvents()).toBe(before);
  });

  it("DELETE with a short id stops that job and only it", async () => {
    const target = await jobs.submit(job());
    const prefix = short(target);
    const others = [...ids, named, twinA, twinB, elsewhere].filter((id) => id.startsWith(prefix));
    if (others.length > 0) return; // an 8-hex-digit collision among a handful of random ids: nothing to learn here
    const stop = await call("DELETE", `${api}/${prefix}?reason=short`);
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    expect((await call("GET", `${api}/${target}`)).body.Job.State).toEqual({ StateType: "Stopped", Message: "short" });
    for (const id of ids) expect((await call("GET", `${api}/${id}`)).body.Job.State.StateType).not.toBe("Stopped");
  });

  it("a job's name in the namespace asked for (default: default), one job per name and namespace", async () => {
    expect((await call("GET", `${api}/nightly-report`)).body.Job.ID).toBe(named);
    expect((await call("GET", `${api}/nightly-report/history`)).body.Items[0].JobID).toBe(named);
    expect((await call("GET", `${api}/nightly-report?namespace=lab`)).status).toBe(404);
    expect((await call("GET", `${api}/twin?namespace=lab`)).body.Job.ID).toBe(elsewhere);
    expect((await call("GET", `${api}/twin/executions?namespace=lab`)).status).toBe(200);
    expect(twinB).toBe(twinA);
    const updated = await call("GET", `${api}/twin`);
    expect(updated.body.Job).toMatchObject({ ID: twinA, Version: 2, Labels: { copy: "b" } });
    // An id is found whatever the namespace.
    expect((await call("GET", `${api}/${elsewhere}?namespace=default`)).body.Job.ID).toBe(elsewhere);
  });
});

describe("job_version", () => {
  it("the current version (or 0, Bacalhau's 'current') is served; one it does not have is a 404", async () => {
    const id = ids[0]!;
    for (const v of ["0", "1"]) {
      const got = await call("GET", `${api}/${id}?job_version=${v}&include=executions,history`);
      expect(got.status, v).toBe(200);
      expect(got.body.Job.Version).toBe(1);
      expect((await call("GET", `${api}/${id}/history?job_version=${v}`)).status).toBe(200);
      expect((await call("GET", `${api}/${id}/executions?job_version=${v}&all_job_versions=true`)).status).toBe(200);
    }
    const other = await call("GET", `${api}/${id}?job_version=2`);
    expect(other.status).toBe(404);
    expect(other.body.Message).toBe(`job version 2 not found for job ${id}`);
    expect((await call("GET", `${api}/${id}/history?job_version=7`)).status).toBe(404);
    for (const bad of ["-1", "x", "1.5"])
      expect((await call("GET", `${api}/${id}?job_version=${bad}`)).status, bad).toBe(400);
  });

  it("GET /jobs/{id}/versions: by id, short id or name; paged with limit and NextToken; bad parameters refused", async () => {
    const job1 = (await call("GET", `${api}/${named}`)).body.Job;
    for (const ref of [named, short(named), "nightly-report"]) {
      expect(await call("GET", `${api}/${ref}/versions?limit=5&order_by=version&reverse=true`)).toEqual({
        status: 200,
        body: { Items: [job1], NextToken: "" },
      });
    }
    expect((await call("GET", `${api}/twin/versions?namespace=lab`)).body.Items.map((j: Body) => j.ID)).toEqual([
      elsewhere,
    ]);
    // "twin" was updated once: two versions, a page of one at a time, as the other list routes page.
    const page = async (query: string) => {
      const { body } = await call("GET", `${api}/twin/versions?${query}`);
      return [body.Items.map((j: Body) => j.Version), body.NextToken];
    };
    expect(await page("limit=1")).toEqual([[1], "1"]);
    expect(await page("limit=1&next_token=1")).toEqual([[2], ""]);
    expect(await page("limit=1&reverse=true")).toEqual([[2], "1"]);
    expect(await page("limit=1&reverse=true&next_token=1")).toEqual([[1], ""]);
    expect(await page("")).toEqual([[1, 2], ""]);
    const token = await call("GET", `${api}/${named}/versions?next_token=abc`);
    expect(token.status).toBe(400);
    expect(token.body.Message).toContain("next_token");
    expect((await call("GET", `${api}/${named}/versions?order_by=name`)).status).toBe(400);
    expect((await call("GET", `${api}/j-zzzz/versions`)).status).toBe(404);
  });
});

describe("parameters Bacalhau's clients send", () => {
  it("namespace=* lists every namespace (apimodels.AllNamespacesNamespace); include items may carry spaces", async () => {
    const everywhere = (await call("GET", `${api}?namespace=*&limit=1000`)).body.Items.map((j: Body) => j.ID);
    expect(everywhere).toEqual(expect.arrayContaining([named, twinA, elsewhere]));
    expect(everywhere).toEqual((await call("GET", `${api}?limit=1000`)).body.Items.map((j: Body) => j.ID));
    expect((await call("GET", `${api}?namespace=lab`)).body.Items.map((j: Body) => j.ID)).toEqual([elsewhere]);
    const got = await call("GET", `${api}/${named}?include=executions,%20history`);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(Object.keys(got.body).sort()).toEqual(["Executions", "History", "Job"]);
  });
});

describe("after a restart", () => {
  it("names and prefixes resolve as before (the index is rebuilt from the snapshot or the store)", async () => {
    const before = await call("GET", `${api}/twin?namespace=lab`);
    await orchestrator.stop();
    orchestrator = await startOrchestrator(config, silentLogger);
    expect(await call("GET", `${api}/twin?namespace=lab`)).toEqual(before);
    expect((await call("GET", `${api}/nightly-report`)).body.Job.ID).toBe(named);
    expect((await call("GET", `${api}/twin`)).body.Job).toMatchObject({ ID: twinA, Version: 2 });
    expect((await call("GET", `${api}/j-`)).status).toBe(400);
    const prefix = short(named);
    if ([...ids, twinA, twinB, elsewhere].every((id) => !id.startsWith(prefix)))
      expect((await call("GET", `${api}/${prefix}`)).body.Job.ID).toBe(named);
  });
});
