import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { startComputeProcess, untilApproved } from "../support/compute-processes.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { firstExecutionIn, settled, untilExecutions } from "../support/job-waits.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { shellJob } from "../support/shell-job.ts";
import type { ShoalProcess } from "../support/shoal-process.ts";
import { SWAGGER_PATH, SwaggerValidator } from "../support/swagger-validator.ts";

/**
 * Shoal's job responses against Bacalhau's API description, and against what Bacalhau's WebUI
 * reads from them (webui/components/jobs/… in bacalhau-project/bacalhau), on real responses: an
 * orchestrator with its NATS, a `shoal compute` running the jobs in Docker.
 *
 * The WebUI's pages read anonymously (it sends no credentials), with these requests:
 * list `GET /jobs?limit=10&reverse=true[&next_token=…]`; detail `GET /jobs/{id}?include=executions`,
 * `GET /jobs/{id}/history?limit=100[&next_token=…]`, `DELETE /jobs/{id}?reason=User requested stop`.
 */
const KEY = "webui-key-0123456789abcdefghijklmn";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const nodeId = `wu-${randomUUID().slice(0, 8)}`;
const api = "/api/v1/orchestrator/jobs";
let image = "";
let orchestrator: RunningOrchestrator;
let compute: ShoalProcess | undefined;

const jobs = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);
/** What the WebUI does: a GET without credentials. */
const read = async (path: string): Promise<Body> => {
  const res = await jobs.call("GET", path, undefined, null);
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};
/** Jobs and executions as the WebUI reads them. */
const webui = {
  job: (id: string) => read(`${api}/${id}?include=executions,history`),
  executions: async (id: string) => (await read(`${api}/${id}/executions`)).Items as Body[],
};

const batch = (command: string, extra: Record<string, unknown> = {}) => ({
  ...shellJob(image, command, { resources: { CPU: "100m", Memory: "16Mb" } }),
  Labels: { team: "webui", purpose: "contract" },
  Meta: { owner: "contract-test" },
  ...extra,
});
const putResponses: Body[] = [];
async function submit(spec: unknown): Promise<string> {
  const body = await jobs.put(spec);
  putResponses.push(body);
  return body.JobID as string;
}

/**
 * Bacalhau's swagger is reference material beside the checkout, not part of it (its text is not
 * copied here): where it is absent, the conformance tests say so and are skipped; the WebUI's
 * field checks below need no swagger and always run.
 */
const swagger = existsSync(SWAGGER_PATH) ? new SwaggerValidator() : undefined;
if (!swagger)
  console.warn(
    `Bacalhau's swagger not found at ${SWAGGER_PATH} (set BACALHAU_SWAGGER): the swagger conformance tests are skipped`,
  );
/** The response conforms to the swagger's definition of it (every mismatch listed when it does not). */
function conforms(definition: string, body: unknown): void {
  expect(swagger!.errors(definition, body), `${definition}: ${JSON.stringify(body, null, 1).slice(0, 4000)}`).toEqual(
    [],
  );
}

const NS_2020 = Date.UTC(2020, 0, 1) * 1e6;
/** The WebUI's normalizeTimestamp reads > 1e15 as nanoseconds; Bacalhau's times are nanoseconds. */
const isNanos = (t: unknown, from: number) =>
  typeof t === "number" && t > NS_2020 && t >= from * 1e6 - 1e9 && t <= Date.now() * 1e6;

let started = 0;
let completed = "";
let completedView: Body = {};
let failed = "";
let stopped = "";
let stopResponse: Body = {};

beforeAll(async () => {
  started = Date.now();
  image = await dockerTestImage();
  orchestrator = await startOrchestrator(
    await ownNatsOrchestratorConfig("shoal-wu-orch-", { "API.Auth.Users": USERS }),
    silentLogger,
  );
  compute = startComputeProcess({
    nodeId,
    dataDir: tempDir(`shoal-wu-${nodeId}-`),
    orchestrators: orchestrator.natsUrl,
    token: orchestrator.joinToken.token,
    settings: ["Compute.Docker.StopGracePeriod=1s"],
  });
  await untilApproved(jobs, nodeId, compute);

  completed = await submit(batch("echo hello; echo oops >&2", { Name: "webui-completed" }));
  failed = await submit(batch("exit 3", { Name: "webui-failed" }));
  completedView = await settled(webui, completed, ["Completed", "Failed"]);
  await settled(webui, failed, ["Completed", "Failed"]);
  stopped = await submit(batch("sleep 30", { Name: "webui-stopped" }));
  await untilExecutions(webui, stopped, firstExecutionIn(6), "sleep 30 running");
  const stop = await jobs.stop(stopped, "User requested stop");
  expect(stop.status, JSON.stringify(stop.body)).toBe(200);
  stopResponse = stop.body;
  await settled(webui, stopped, ["Stopped"]);
  // The node reports the cancelled container after the stop is acknowledged.
  await untilExecutions(webui, stopped, firstExecutionIn(11), "stopped execution Cancelled");
}, 180_000);

afterAll(async () => {
  if (compute && compute.child.exitCode === null) await compute.kill("SIGTERM");
  await orchestrator?.stop();
  await removeContainersOf(nodeId);
});

describe.skipIf(!swagger)("responses conform to Bacalhau's swagger", () => {
  it("PUT /jobs: apimodels.PutJobResponse; DELETE /jobs/{id}: apimodels.StopJobResponse", () => {
    expect(putResponses).toHaveLength(3);
    for (const body of putResponses) conforms("apimodels.PutJobResponse", body);
    conforms("apimodels.StopJobResponse", stopResponse);
  });

  it("GET /jobs (as the WebUI asks): apimodels.ListJobsResponse", async () => {
    conforms("apimodels.ListJobsResponse", await read(`${api}?limit=10&reverse=true`));
    conforms("apimodels.ListJobsResponse", await read(api));
  });

  it("GET /jobs/{id} with and without include: apimodels.GetJobResponse", async () => {
    for (const id of [completed, failed, stopped]) {
      conforms("apimodels.GetJobResponse", await read(`${api}/${id}`));
      conforms("apimodels.GetJobResponse", await read(`${api}/${id}?include=executions`));
      conforms("apimodels.GetJobResponse", await read(`${api}/${id}?include=executions,history`));
    }
  });

  it("GET /jobs/{id}/versions: apimodels.ListJobVersionsResponse", async () => {
    for (const id of [completed, failed, stopped])
      conforms("apimodels.ListJobVersionsResponse", await read(`${api}/${id}/versions`));
  });

  it("GET /jobs/{id}/executions and /history: apimodels.ListJobExecutionsResponse, apimodels.ListJobHistoryResponse", async () => {
    for (const id of [completed, failed, stopped]) {
      conforms("apimodels.ListJobExecutionsResponse", await read(`${api}/${id}/executions`));
      conforms("apimodels.ListJobHistoryResponse", await read(`${api}/${id}/history?limit=100`));
    }
  });
});

describe("what the WebUI reads", () => {
  it("jobs list (JobsOverview, JobsTable): newest first, paged with NextToken, each row's fields", async () => {
    const first = await read(`${api}?limit=2&reverse=true`);
    expect(first.Items.map((j: Body) => j.ID)).toEqual([stopped, failed]);
    expect(first.NextToken).not.toBe("");
    // The WebUI sends its limit and reverse again with the token.
    const second = await read(`${api}?limit=2&next_token=${encodeURIComponent(first.NextToken)}&reverse=true`);
    expect(second.Items.map((j: Body) => j.ID)).toEqual([completed]);
    expect(second.NextToken).toBe("");

    const row = (await read(`${api}?limit=10&reverse=true`)).Items.find((j: Body) => j.ID === completed);
    expect(row.Name).toBe("webui-completed");
    expect(row.State).toMatchObject({ StateType: "Completed" });
    expect(typeof row.State.Message).toBe("string");
    expect(row.Type).toBe("batch");
    expect(row.Tasks[0].Engine.Type).toBe("docker");
    expect(isNanos(row.CreateTime, started)).toBe(true);
    expect(isNanos(row.ModifyTime, started)).toBe(true);
    expect(row.ModifyTime).toBeGreaterThan(row.CreateTime);
  });

  it("job detail (JobDetails, JobInformation, JobActions, JobInspect): the job with its executions", async () => {
    const body = await read(`${api}/${completed}?include=executions`);
    expect(body.History).toBeUndefined();
    expect(body.Job).toMatchObject({
      ID: completed,
      Name: "webui-completed",
      Namespace: "default",
      Type: "batch",
      State: { StateType: "Completed" },
      Labels: { team: "webui", purpose: "contract" },
      Meta: { owner: "contract-test" },
    });
    expect(body.Job.Tasks[0].Engine.Type).toBe("docker");
    expect(body.Job.Tasks[0].Publisher).toBeUndefined();
    expect((await read(`${api}/${failed}`)).Job.State).toMatchObject({
      StateType: "Failed",
      Message: expect.stringContaining("exited with code 3"),
    });
    expect((await read(`${api}/${stopped}`)).Job.State).toEqual({
      StateType: "Stopped",
      Message: "User requested stop",
    });
  });

  it("job detail by the short id Bacalhau's CLI prints (`/jobs?id=j-1a2b3c4d`): the same job, executions, history", async () => {
    const shortId = completed.slice(0, "j-".length + 8);
    const byShort = await read(`${api}/${shortId}?include=executions`);
    expect(byShort).toEqual(await read(`${api}/${completed}?include=executions`));
    expect(await read(`${api}/${shortId}/history?limit=100`)).toEqual(
      await read(`${api}/${completed}/history?limit=100`),
    );
  });

  it("served as the node routes the WebUI already uses: same-origin through its proxy, the same headers for a browser's Origin", async () => {
    const headers = async (path: string, method = "GET") => {
      const res = await fetch(`${orchestrator.apiUrl}${path}`, {
        method,
        headers: { origin: "http://127.0.0.1:8438", "access-control-request-method": "GET" },
      });
      await res.arrayBuffer();
      const cors = [...res.headers.keys()].filter((h) => h.startsWith("access-control-")).sort();
      return { status: res.status, cors };
    };
    expect(await headers(`${api}?limit=10&reverse=true`)).toEqual(await headers("/api/v1/orchestrator/nodes"));
    expect(await headers(`${api}/${completed}`)).toEqual(await headers(`/api/v1/orchestrator/nodes/${nodeId}`));
    expect(await headers(`${api}/${completed}`, "OPTIONS")).toEqual(
      await headers(`/api/v1/orchestrator/nodes/${nodeId}`, "OPTIONS"),
    );
  });

  it("executions tab (JobExecutions): ids, node, states as Bacalhau's integers, nanosecond times, the run output", async () => {
    const { Executions } = await read(`${api}/${completed}?include=executions`);
    expect(Executions.Items).toHaveLength(1);
    const e = Executions.Items[0];
    expect(e.ID).toMatch(/^e-[0-9a-f]{8}-/);
    expect(e.NodeID).toBe(nodeId);
    expect(e.JobID).toBe(completed);
    // getExecutionStateLabel / getExecutionDesiredStateLabel look names up under keys the enums
    // do not have: only integers show. 9 Completed; desired 2 Stopped.
    expect(e.ComputeState.StateType).toBe(9);
    expect(e.DesiredState.StateType).toBe(2);
    expect(isNanos(e.CreateTime, started)).toBe(true);
    expect(e.ModifyTime).toBeGreaterThanOrEqual(e.CreateTime);
    expect(e.RunOutput).toMatchObject({
      Stdout: "hello\n",
      stderr: "oops\n",
      ExitCode: 0,
      StdoutTruncated: false,
      StderrTruncated: false,
    });
    expect(e.PublishedResult).toBeUndefined();
    expect(e.AllocatedResources.Tasks.main).toMatchObject({ CPU: 0.1, Memory: 16_000_000 });

    const stoppedExecution = (await read(`${api}/${stopped}/executions`)).Items[0];
    // Cancelled, Stopped
    expect([stoppedExecution.ComputeState.StateType, stoppedExecution.DesiredState.StateType]).toEqual([11, 2]);
  });

  it("history tab (JobHistoryContainer, JobHistory): Time, ExecutionID only on execution entries, Event Topic and Message, paged", async () => {
    const all = await read(`${api}/${completed}/history?limit=100`);
    expect(all.NextToken).toBe("");
    const items = all.Items as Body[];
    // Job entries (submitted, running, completed) and the execution's (at least created, running, completed).
    expect(items.length).toBeGreaterThanOrEqual(6);
    expect(items.some((h) => h.Type === "ExecutionLevel")).toBe(true);
    const executionId = completedView.Executions.Items[0].ID;
    for (const h of items) {
      expect(Number.isNaN(new Date(h.Time).getTime()), h.Time).toBe(false);
      expect(h.Event.Topic).toMatch(/\S/);
      expect(h.Event.Message).toMatch(/\S/);
      expect(h.JobID).toBe(completed);
      // The WebUI tells job entries from execution entries by ExecutionID alone.
      if (h.Type === "JobLevel") expect(h.ExecutionID ?? "").toBe("");
      else expect(h.ExecutionID).toBe(executionId);
    }
    expect(items.filter((h) => h.Type === "JobLevel").map((h) => h.Event.Topic)).toEqual([
      "Submission",
      "State Update",
      "State Update",
    ]);
    const page = await read(`${api}/${completed}/history?limit=3`);
    expect(page.Items).toEqual(items.slice(0, 3));
    const next = await read(`${api}/${completed}/history?limit=3&next_token=${encodeURIComponent(page.NextToken)}`);
    expect(next.Items).toEqual(items.slice(3, 6));
  });
});
