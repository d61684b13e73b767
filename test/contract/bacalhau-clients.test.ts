import { execFileSync } from "node:child_process";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { computeInfo, orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { settled } from "../support/job-waits.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { storedEvents } from "../support/stored-events.ts";

/**
 * The requests Bacalhau's own clients send, byte for byte where it matters, against a real
 * orchestrator (real HTTP, NATS and SQLite). Each is built from the client's source at
 * bacalhau-project/bacalhau e28960c, named at the request.
 */

const KEY = "bacalhau-cli-key-0123456789abcdefgh";
const OTHER_KEY = "other-submitter-key-0123456789abcd";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
  { Alias: "other", APIKey: OTHER_KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] },
];
const TOKEN = "join-s3cret";
const JOBS = "/api/v1/orchestrator/jobs";
const NODES = "/api/v1/orchestrator/nodes";

let nats: TestNatsServer;
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
let nc: NatsConnection;
const api = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);

/**
 * apimodels.BasePutRequest as Go's encoding/json writes it (pkg/publicapi/apimodels/base_requests.go): the client's
 * `write` sends the whole request struct as the body (pkg/publicapi/client/v2/client.go), and the AuthenticatingClient
 * has set Credential to the credential it also sends as the Authorization header (HTTPCredential, http_request.go).
 */
const basePut = (namespace = "") => ({
  Namespace: namespace,
  Credential: { Scheme: "Bearer", Value: KEY, Params: null },
  IdempotencyToken: "",
});

const job = (extra: Record<string, unknown> = {}) => ({
  Name: `compat-${Math.random().toString(16).slice(2, 10)}`,
  Type: "batch",
  Count: 1,
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: "busybox:1", Parameters: ["echo", "hi"] } },
    },
  ],
  ...extra,
});

const jobStreams = async () =>
  (await storedEvents(config.DataDir)).filter((e) => e.stream.startsWith("job-")).map((e) => e.stream);

/** `bacalhau job run`: apimodels.PutJobRequest{Job, Force} (cmd/cli/job/run.go), BasePutRequest first. */
async function jobRun(spec: Body, namespace = ""): Promise<string> {
  const res = await api.call("PUT", JOBS, { ...basePut(namespace), Job: spec, Force: false });
  expect(res.status, res.text).toBe(200);
  return res.body.JobID as string;
}

const queued = (id: string) => settled(api, id, ["Queued"], 10_000);

beforeAll(async () => {
  nats = await TestNatsServer.start();
  config = orchestratorConfig(nats.url, {
    "API.Auth.Users": USERS,
    "Orchestrator.Auth.Token": TOKEN,
    "Orchestrator.NodeManager.ManualApproval": true,
    // With no node to run on, jobs stay Queued: stoppable, and their state settled.
    "JobDefaults.Batch.Task.Timeouts.QueueTimeout": 600_000,
  });
  orchestrator = await startOrchestrator(config, silentLogger);
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.drain();
  await orchestrator?.stop();
  await nats?.stop();
});

describe("the Go client's PUT bodies (BasePutRequest's Namespace, Credential, IdempotencyToken)", () => {
  it("`job run` and `docker run` submit; Credential is neither stored nor answered", async () => {
    const id = await jobRun(job());
    await queued(id);
    const stored = (await storedEvents(config.DataDir)).filter((e) => e.stream === `job-${id}`);
    expect(stored.map((e) => e.type)).toContain("JobSubmitted");
    expect(JSON.stringify(stored)).not.toContain(KEY);
    expect(JSON.stringify((await api.call("GET", `${JOBS}/${id}?include=history`)).body)).not.toContain(KEY);
  });

  it("a Namespace beside the job must be the job's: the same is taken, another refused, nothing stored", async () => {
    await queued(await jobRun(job({ Namespace: "team-a" }), "team-a"));
    // No Namespace in the job is Bacalhau's "default".
    await queued(await jobRun(job(), "default"));
    const before = await jobStreams();
    const res = await api.call("PUT", JOBS, { ...basePut("team-b"), Job: job({ Namespace: "team-a" }), Force: false });
    expect(res.status).toBe(400);
    expect(res.body.Message).toContain(`the job's namespace "team-a" is not the request's "team-b"`);
    expect(await jobStreams()).toEqual(before);
  });

  it("an IdempotencyToken makes a retried submission answer the first job instead of storing another", async () => {
    const spec = job();
    const withToken = (token: string, body: Body, key = KEY) =>
      api.call("PUT", JOBS, { ...basePut(), IdempotencyToken: token, Job: body, Force: false }, key);
    const first = await withToken("retry-1", spec);
    expect(first.status, first.text).toBe(200);
    await queued(first.body.JobID as string);
    const before = await jobStreams();
    const again = await withToken("retry-1", spec);
    expect(again.status, again.text).toBe(200);
    expect(again.body.JobID).toBe(first.body.JobID);
    expect(await jobStreams()).toEqual(before);
    // Another job under the same token is refused; another submitter's token is their own (the same name would be
    // the same job: a name is its namespace's job).
    const other = await withToken("retry-1", job());
    expect(other.status).toBe(409);
    expect(other.body.Message).toContain("was used for another job");
    const theirs = await withToken("retry-1", job(), OTHER_KEY);
    expect(theirs.status, theirs.text).toBe(200);
    expect(theirs.body.JobID).not.toBe(first.body.JobID);
  });

  it("still refuses fields that are neither the request's nor BasePutRequest's", async () => {
    const res = await api.call("PUT", JOBS, { ...basePut(), Job: job(), Force: false, Headers: {} });
    expect(res.status).toBe(400);
    expect(res.body.Message).toContain("Headers");
  });
});

describe("bodies decoded as Go does: field names in any case, each field once", () => {
  it("the Python SDK's Jobs().put, with the request's namespace, credential and idempotency_token set", async () => {
    // python/examples/submit_job.py's job, with PutJobRequest(job, credential=ApiHTTPCredential(scheme, value),
    // idempotency_token, namespace) as ApiClient.sanitize_for_serialization writes it: each model's attribute_map
    // names (api_put_job_request.py: credential, idempotencyToken, namespace), attributes left None dropped.
    const body = {
      Job: {
        Count: 1,
        Name: `A Simple Docker Job ${Math.random().toString(16).slice(2, 8)}`,
        Tasks: [
          {
            Engine: {
              Params: { Image: "ubuntu:latest", Entrypoint: ["/bin/bash"], Parameters: ["-c", "echo Hello World"] },
              Type: "docker",
            },
            Name: "My Main task",
            Publisher: {},
          },
        ],
        Type: "batch",
      },
      credential: { scheme: "Bearer", value: KEY },
      idempotencyToken: "python-sdk-1",
      namespace: "default",
    };
    const first = await api.call("PUT", JOBS, body);
    expect(first.status, first.text).toBe(200);
    const id = first.body.JobID as string;
    await queued(id);
    // The token is taken as Bacalhau's IdempotencyToken: the retry answers the same job.
    const before = await jobStreams();
    const again = await api.call("PUT", JOBS, body);
    expect(again.body.JobID).toBe(id);
    expect(await jobStreams()).toEqual(before);
    // The namespace as the request's Namespace: another than the job's is refused.
    const other = await api.call("PUT", JOBS, { ...body, idempotencyToken: "python-sdk-2", namespace: "team-b" });
    expect(other.status).toBe(400);
    expect(other.body.Message).toContain(`is not the request's "team-b"`);
    expect(JSON.stringify(await storedEvents(config.DataDir))).not.toContain(KEY);
  });

  it("a job sent with every field name in lower case, its map keys kept as sent", async () => {
    const res = await api.call("PUT", JOBS, {
      job: {
        name: `lower-${Math.random().toString(16).slice(2, 8)}`,
        type: "batch",
        labels: { Team: "a" },
        tasks: [
          {
            name: "main",
            engine: { type: "docker", params: { image: "busybox:1", parameters: ["echo", "hi"] } },
            env: { GREETING: "hi" },
          },
        ],
      },
      force: false,
    });
    expect(res.status, res.text).toBe(200);
    const { Job } = await queued(res.body.JobID as string);
    expect(Job).toMatchObject({ Type: "batch", Labels: { Team: "a" } });
    expect(Job.Tasks[0]).toMatchObject({ Engine: { Params: { Image: "busybox:1" } }, Env: { GREETING: "hi" } });
  });

  it("refuses two keys for one field, naming both, storing nothing", async () => {
    const before = await jobStreams();
    const res = await api.call("PUT", JOBS, { Job: job({ type: "ops" }), Force: false });
    expect(res.status).toBe(400);
    expect(res.body.Message).toContain(`both "Type" and "type" are given in Job`);
    const top = await api.call("PUT", JOBS, { Job: job(), job: job() });
    expect(top.status).toBe(400);
    expect(top.body.Message).toContain(`both "Job" and "job" are given at the top`);
    expect(await jobStreams()).toEqual(before);
  });

  it("the API's document keeps Bacalhau's spelling", async () => {
    const doc = (await api.call("GET", "/api/v1/openapi.json")).body;
    expect(Object.keys(doc.components.schemas.PutNodeRequest.properties)).toContain("Action");
    expect(Object.keys(doc.components.schemas.PutNodeRequest.properties)).not.toContain("action");
  });
});

describe("Bacalhau's other paths: agent/version's BuildVersionInfo, POST /jobs, the legacy redirects", () => {
  it("GET /agent/version answers BuildVersionInfo whole, without credentials: the build's commit, time", async () => {
    const res = await api.call("GET", "/api/v1/agent/version", undefined, null);
    expect(res.status).toBe(200);
    // pkg/models/buildversion.go's fields in its order.
    expect(Object.keys(res.body)).toEqual(["Major", "Minor", "GitVersion", "GitCommit", "BuildDate", "GOOS", "GOARCH"]);
    // The tests' set-up built this checkout (scripts/build.mjs), which stamped its commit and the commit's time.
    const head = (args: string[]) => execFileSync("git", args, { encoding: "utf8" }).trim();
    expect(res.body.GitCommit).toBe(head(["rev-parse", "HEAD"]));
    expect(Date.parse(res.body.BuildDate as string)).toBe(Date.parse(head(["log", "-1", "--format=%cI"])));
    expect(res.body.BuildDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it("POST /jobs is PUT /jobs, as in Bacalhau's router; the document lists PUT only, as its swagger does", async () => {
    const res = await api.call("POST", JOBS, { ...basePut(), Job: job(), Force: false });
    expect(res.status, res.text).toBe(200);
    await queued(res.body.JobID as string);
    const doc = (await api.call("GET", "/api/v1/openapi.json")).body;
    expect(Object.keys(doc.paths["/api/v1/orchestrator/jobs"]).sort()).toEqual(["get", "put"]);
  });

  it.each([
    ["/", "/api/v1/agent/version"],
    ["/version", "/api/v1/agent/version"],
    ["/livez", "/api/v1/agent/alive"],
  ])("GET %s redirects (301) to %s without credentials, and is in no document", async (path, target) => {
    const res = await fetch(`${orchestrator.apiUrl}${path}`, { redirect: "manual" });
    expect(res.status).toBe(301);
    expect(res.headers.get("location")).toBe(target);
    const followed = await fetch(`${orchestrator.apiUrl}${path}`);
    expect(followed.status).toBe(200);
    const doc = (await api.call("GET", "/api/v1/openapi.json")).body;
    expect(Object.keys(doc.paths)).not.toContain(path);
  });
});

describe("`job stop`: the reason in the DELETE body", () => {
  /** apimodels.StopJobRequest{Reason: "Stopped at user request", Namespace} (cmd/cli/job/stop.go), sent by Delete. */
  const stopBody = (namespace: string) => ({ ...basePut(namespace), reason: "Stopped at user request" });

  it("records the body's reason; ToHTTPRequest puts the namespace in the query too", async () => {
    const id = await jobRun(job());
    await queued(id);
    const res = await api.call("DELETE", `${JOBS}/${id}?namespace=default`, stopBody("default"));
    expect(res.status, res.text).toBe(200);
    expect((await api.call("GET", `${JOBS}/${id}`)).body.Job.State).toEqual({
      StateType: "Stopped",
      Message: "Stopped at user request",
    });
  });

  it("takes the body's reason over the query's, as Bacalhau's server reads only the body", async () => {
    const id = await jobRun(job());
    await queued(id);
    const res = await api.call("DELETE", `${JOBS}/${id}?reason=from-query`, stopBody(""));
    expect(res.status, res.text).toBe(200);
    expect((await api.call("GET", `${JOBS}/${id}`)).body.Job.State.Message).toBe("Stopped at user request");
  });

  it("still takes the query's reason without a body (the WebUI)", async () => {
    const id = await jobRun(job());
    await queued(id);
    expect((await api.stop(id, "User requested stop")).status).toBe(200);
    expect((await api.call("GET", `${JOBS}/${id}`)).body.Job.State.Message).toBe("User requested stop");
  });

  it("takes the Python SDK's stop: the reason in the query and a body of {} (bacalhau_apiclient/rest.py)", async () => {
    const id = await jobRun(job());
    await queued(id);
    const res = await api.call("DELETE", `${JOBS}/${id}?reason=${encodeURIComponent("from python")}`, {});
    expect(res.status, res.text).toBe(200);
    expect((await api.call("GET", `${JOBS}/${id}`)).body.Job.State.Message).toBe("from python");
  });

  it("refuses a query namespace and a body namespace that differ, stopping nothing", async () => {
    const id = await jobRun(job());
    await queued(id);
    const res = await api.call("DELETE", `${JOBS}/${id}?namespace=default`, stopBody("other"));
    expect(res.status).toBe(400);
    expect(res.body.Message).toContain("differ");
    expect((await api.call("GET", `${JOBS}/${id}`)).body.Job.State.StateType).toBe("Queued");
  });
});

describe("the CLI's login methods (GET /api/v1/auth, cmd/util/auth/auth.go RunAuthenticationFlow)", () => {
  /** apimodels.AuthnRequest as `auth.Authenticate` posts it: BaseRequest, Name, MethodData ([]byte: base64). */
  const login = (answer: unknown, key: string | null = null) =>
    api.call(
      "POST",
      "/api/v1/auth/api-key",
      {
        Namespace: "",
        Credential: null,
        Name: "api-key",
        MethodData: Buffer.from(JSON.stringify(answer)).toString("base64"),
      },
      key,
    );

  it("answers one `ask` method without credentials, asking for a hidden APIKey", async () => {
    const res = await api.call("GET", "/api/v1/auth", undefined, null);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      Methods: {
        "api-key": {
          type: "ask",
          params: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            properties: { APIKey: { type: "string", writeOnly: true, minLength: 1 } },
            required: ["APIKey"],
          },
        },
      },
      NextToken: "",
    });
  });

  it("hands a valid key back as the token, which then works as `Authorization: Bearer <token>`", async () => {
    const res = await login({ APIKey: KEY });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ Authentication: { success: true, token: KEY } });
    const token = res.body.Authentication.token as string;
    const put = await api.call("PUT", JOBS, { ...basePut(), Job: job(), Force: false }, token);
    expect(put.status).toBe(200);
  });

  it("refuses a wrong key with 401 (the CLI's ErrInvalidToken) and an empty or malformed answer with 400", async () => {
    const wrong = await login({ APIKey: "not-a-key-of-anyone" });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain("not-a-key-of-anyone");
    expect((await login({ APIKey: "" })).status).toBe(400);
    expect((await login("just a string")).status).toBe(400);
  });
});

describe("the Python SDK's queries (python/bacalhau_sdk/jobs.py through the generated client)", () => {
  let id = "";
  beforeAll(async () => {
    id = await jobRun(job());
    await queued(id);
  });

  it("Jobs().list(): reverse=False, next_token= (Python writes booleans capitalised)", async () => {
    const res = await api.call("GET", `${JOBS}?limit=5&order_by=created_at&reverse=False&next_token=`);
    expect(res.status, res.text).toBe(200);
    const ids = (res.body.Items as Body[]).map((j) => j.ID as string);
    const reversed = await api.call("GET", `${JOBS}?limit=5&order_by=created_at&reverse=True&next_token=`);
    expect((reversed.body.Items as Body[]).map((j) => j.ID)).not.toEqual(ids);
  });

  it("Jobs().executions(): namespace=, next_token=, order_by= and reverse=False", async () => {
    const res = await api.call(
      "GET",
      `${JOBS}/${id}/executions?namespace=&limit=5&next_token=&reverse=False&order_by=`,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ Items: [], NextToken: "" });
  });

  it("Jobs().history(): node_id= is absent; a node_id Shoal would ignore is refused", async () => {
    const res = await api.call("GET", `${JOBS}/${id}/history?event_type=job&node_id=&execution_id=`);
    expect(res.status, res.text).toBe(200);
    expect((res.body.Items as Body[]).length).toBeGreaterThan(0);
    const named = await api.call("GET", `${JOBS}/${id}/history?event_type=job&node_id=n1`);
    expect(named.status).toBe(400);
    expect(named.body.Message).toContain("node_id is not a filter of a job's history");
  });

  it.each(["1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"])(
    "reverse=%s is one of Go's strconv.ParseBool spellings, on nodes too",
    async (value) => {
      expect((await api.call("GET", `${JOBS}?reverse=${value}`)).status).toBe(200);
      expect((await api.call("GET", `${NODES}?reverse=${value}&filter-cordoned=${value}`)).status).toBe(200);
    },
  );

  it("refuses what strconv.ParseBool refuses", async () => {
    const res = await api.call("GET", `${JOBS}?reverse=yes`);
    expect(res.status).toBe(400);
    expect(res.body.Message).toContain("reverse");
  });
});

// Last: once a node is approved, jobs are placed on it and no longer stay Queued.
describe("`node approve`, `reject`, `delete` bodies", () => {
  it("`node approve -m`: PutNodeRequest{NodeID, Action, Message} (cmd/cli/node/action.go), message kept", async () => {
    expect((await joinNode(nc, "compat-node", TOKEN, computeInfo("compat-node"))).Accepted).toBe(true);
    const res = await api.call("PUT", `${NODES}/compat-node`, {
      ...basePut(),
      Action: "approve",
      Message: "racked and checked",
      NodeID: "compat-node",
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ Success: true });
    const node = (await api.call("GET", `${NODES}/compat-node`)).body.Node as Body;
    expect(node.Membership).toBe("APPROVED");
    const events = (await storedEvents(config.DataDir)).filter((e) => e.stream === "node-compat-node");
    expect(events.at(-1)).toMatchObject({ type: "NodeApproved", metadata: { reason: "racked and checked" } });
    expect(JSON.stringify(events)).not.toContain(KEY);
  });

  it('takes the fields in lower case, as Bacalhau\'s server does: {"action": "approve"}', async () => {
    expect((await joinNode(nc, "compat-node-2", TOKEN, computeInfo("compat-node-2"))).Accepted).toBe(true);
    const res = await api.call("PUT", `${NODES}/compat-node-2`, { action: "approve", message: "curl" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ Success: true });
    expect((await api.call("GET", `${NODES}/compat-node-2`)).body.Node.Membership).toBe("APPROVED");
  });
});
