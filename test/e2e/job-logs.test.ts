import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { startComputeProcess, untilApproved } from "../support/compute-processes.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { runJobLogs } from "../support/job-logs-cli.ts";
import { ndjson } from "../support/ndjson-items.ts";
import { settled, untilExecutions } from "../support/job-waits.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { shellJob } from "../support/shell-job.ts";
import { runShoal, waitFor, type ShoalProcess } from "../support/shoal-process.ts";

/**
 * Job logs end to end: an orchestrator (its own NATS), a real `shoal compute` running the jobs in
 * Docker, and `GET /jobs/{id}/logs` over HTTP (NDJSON) and WebSocket, and `shoal job logs`.
 */
const KEY = "logs-key-0123456789abcdefghijklmnop";
const NODE_ONLY_KEY = "logs-nodes-0123456789abcdefghijklm";
const USERS: AuthUser[] = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node"] }] },
  { Alias: "nodes", APIKey: NODE_ONLY_KEY, Capabilities: [{ Actions: ["read:node"] }] },
];
const nodeId = `jl-${randomUUID().slice(0, 8)}`;
let image = "";
let config: ShoalConfig;
let orchestrator: RunningOrchestrator;
let compute: ShoalProcess | undefined;

const jobs = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);
const auth = (key: string | null): Record<string, string> => (key === null ? {} : { authorization: `Bearer ${key}` });
/**
 * The route as a WebSocket: every message (parsed, with when it came) and the close code; or the HTTP status it was
 * refused with.
 */
function ws(
  path: string,
  key: string | null = KEY,
): Promise<{ messages: { at: number; body: Body }[]; code: number } | { refused: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${orchestrator.apiUrl.replace(/^http/, "ws")}${path}`, { headers: auth(key) });
    const messages: { at: number; body: Body }[] = [];
    socket.on("message", (data) => messages.push({ at: Date.now(), body: JSON.parse(data.toString()) as Body }));
    socket.on("close", (code) => resolve({ messages, code }));
    socket.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ refused: res.statusCode ?? 0, body }));
    });
    socket.on("error", (e) => {
      if (!String(e.message).startsWith("Unexpected server response")) reject(e);
    });
  });
}
const lines = (messages: readonly { body: Body }[]) => messages.map((m) => m.body);

const batch = (command: string, resources?: Record<string, string>, timeouts: Record<string, number> = {}) =>
  shellJob(image, command, { resources, timeouts });
/** Bacalhau's execution compute state 6: Running on its node. */
const executing = (jobId: string) =>
  untilExecutions(
    jobs,
    jobId,
    (executions) => executions.some((e) => e.ComputeState?.StateType === 6),
    `an execution of ${jobId} running`,
    60_000,
  );
const cli = (...args: string[]) =>
  runJobLogs([...args, "--api-host", "127.0.0.1", "--api-port", new URL(orchestrator.apiUrl).port, "--api-key", KEY]);
const out = (type: number, line: string) => ({ value: { Type: type, Line: line } });

beforeAll(async () => {
  image = await dockerTestImage();
  config = await ownNatsOrchestratorConfig("shoal-jl-orch-", {
    "API.Auth.Users": USERS,
    "API.Auth.AnonymousAccess": "none",
  });
  orchestrator = await startOrchestrator(config, silentLogger);
  compute = startComputeProcess({
    nodeId,
    dataDir: tempDir(`shoal-jl-${nodeId}-`),
    orchestrators: orchestrator.natsUrl,
    token: orchestrator.joinToken.token,
    cpu: "2",
    memory: "512Mi",
    settings: ["Compute.Docker.StopGracePeriod=1s"],
  });
  await untilApproved(jobs, nodeId, compute);
}, 120_000);

afterAll(async () => {
  if (compute && compute.child.exitCode === null) await compute.kill("SIGTERM");
  await orchestrator?.stop();
  await removeContainersOf(nodeId);
});

describe("GET /api/v1/orchestrator/jobs/{id}/logs", () => {
  it("a finished job: its output over HTTP (NDJSON) and WebSocket in Bacalhau's messages, stdout then stderr, tagged; tail; the CLI", async () => {
    const jobId = await jobs.submit(batch("echo out1; echo err1 >&2; echo out2"));
    await settled(jobs, jobId, ["Completed"]);
    const expected = [out(1, "out1\n"), out(1, "out2\n"), out(2, "err1\n")];
    const http = await jobs.call("GET", `/api/v1/orchestrator/jobs/${jobId}/logs`);
    expect(http.status).toBe(200);
    expect(http.type).toContain("application/x-ndjson");
    expect(ndjson(http.text)).toEqual(expected);
    // The short id the CLIs print names the job here too, as on every job route.
    const short = await jobs.call("GET", `/api/v1/orchestrator/jobs/${jobId.slice(0, 10)}/logs`);
    expect(ndjson(short.text)).toEqual(expected);
    const socket = await ws(`/api/v1/orchestrator/jobs/${jobId}/logs`);
    expect(socket).toMatchObject({ code: 1000 });
    expect(lines((socket as { messages: { body: Body }[] }).messages)).toEqual(expected);
    // tail N: the last N lines; tail=true (Bacalhau's): only what comes from now on, so nothing of a finished job.
    expect(ndjson((await jobs.call("GET", `/api/v1/orchestrator/jobs/${jobId}/logs?tail=2`)).text)).toEqual(
      expected.slice(1),
    );
    expect(
      ndjson((await jobs.call("GET", `/api/v1/orchestrator/jobs/${jobId}/logs?tail=true&follow=true`)).text),
    ).toEqual([]);
    const executionId = (await jobs.call("GET", `/api/v1/orchestrator/jobs/${jobId}/executions`)).body.Items[0]
      .ID as string;
    expect(
      ndjson((await jobs.call("GET", `/api/v1/orchestrator/jobs/${jobId}/logs?execution_id=${executionId}`)).text),
    ).toEqual(expected);
    const printed = await cli(jobId);
    expect(printed).toMatchObject({ code: 0, stdout: "out1\nout2\n", stderr: "err1\n" });
  }, 120_000);

  it("follow on a running job: lines as they come, over WebSocket, HTTP and the CLI, each ending when the execution ends", async () => {
    // The readers connect during the first sleep, before the first line.
    const jobId = await jobs.submit(batch("sleep 3; for i in 1 2 3; do echo $i; sleep 1; done"));
    await executing(jobId);
    const path = `/api/v1/orchestrator/jobs/${jobId}/logs?follow=true`;
    const [socket, http, printed] = await Promise.all([ws(path), jobs.call("GET", path), cli(jobId, "--follow")]);
    const done = await settled(jobs, jobId, ["Completed", "Failed"]);
    expect(done.Job.State.StateType).toBe("Completed");
    expect(socket).toMatchObject({ code: 1000 });
    const messages = (socket as { messages: { at: number; body: Body }[] }).messages;
    expect(lines(messages)).toEqual([out(1, "1\n"), out(1, "2\n"), out(1, "3\n")]);
    // As they came: the command sleeps a second between lines.
    expect(messages[2]!.at - messages[0]!.at, "WebSocket: from line 1 to line 3").toBeGreaterThanOrEqual(1500);
    expect(ndjson(http.text)).toEqual([out(1, "1\n"), out(1, "2\n"), out(1, "3\n")]);
    expect(printed).toMatchObject({ code: 0, stdout: "1\n2\n3\n", stderr: "" });
    expect(printed.stdoutAt.at(-1)!.at - printed.stdoutAt[0]!.at, "CLI: from line 1 to line 3").toBeGreaterThanOrEqual(
      1500,
    );
  }, 120_000);

  it("tail on a running job with follow: the last lines so far, stderr tagged, then what follows", async () => {
    const jobId = await jobs.submit(batch("echo l1; sleep 1; echo l2 >&2; sleep 1; echo l3; sleep 4; echo l4"));
    await executing(jobId);
    await waitFor(
      async () => ndjson((await jobs.call("GET", `/api/v1/orchestrator/jobs/${jobId}/logs`)).text).length === 3,
      20_000,
      () => "three lines written",
    );
    // Docker orders the two streams' lines as its log received them: a second apart, l1, l2 and l3 come in order.
    const socket = await ws(`/api/v1/orchestrator/jobs/${jobId}/logs?tail=2&follow=true`);
    expect(socket).toMatchObject({ code: 1000 });
    expect(lines((socket as { messages: { body: Body }[] }).messages)).toEqual([
      out(2, "l2\n"),
      out(1, "l3\n"),
      out(1, "l4\n"),
    ]);
  }, 120_000);

  it("refused: no credentials (401), without read:job (403), a bad query (400), an unknown job (404), a job without executions (409)", async () => {
    const jobId = await jobs.submit(batch("echo hi"));
    await settled(jobs, jobId, ["Completed"]);
    const path = `/api/v1/orchestrator/jobs/${jobId}/logs`;
    expect((await jobs.call("GET", path, undefined, null)).status).toBe(401);
    expect(await ws(path, null)).toMatchObject({ refused: 401 });
    expect((await jobs.call("GET", path, undefined, NODE_ONLY_KEY)).status).toBe(403);
    expect(await ws(path, NODE_ONLY_KEY)).toMatchObject({ refused: 403 });

    for (const [query, words] of [
      ["tail=abc", "tail must be true"],
      ["tail=20000", "at most 10000 lines"],
      ["follow=maybe", "follow"],
    ] as const) {
      const res = await jobs.call("GET", `${path}?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.Message, query).toContain(words);
      const refused = await ws(`${path}?${query}`);
      expect(refused, query).toMatchObject({ refused: 400 });
      expect((refused as { body: string }).body).toContain(words);
    }

    const unknown = await jobs.call("GET", `/api/v1/orchestrator/jobs/j-${randomUUID()}/logs`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.Message).toContain("job not found");
    expect(await ws(`/api/v1/orchestrator/jobs/j-${randomUUID()}/logs`)).toMatchObject({ refused: 404 });
    const otherExecution = await jobs.call("GET", `${path}?execution_id=e-${randomUUID()}`);
    expect(otherExecution.status).toBe(404);
    expect(otherExecution.body.Message).toContain(`in job ${jobId}`);

    const queued = await jobs.submit(batch("true", { CPU: "8", Memory: "32Mb" }, { QueueTimeout: 600 }));
    await settled(jobs, queued, ["Queued"]);
    const none = await jobs.call("GET", `/api/v1/orchestrator/jobs/${queued}/logs`);
    expect(none.status).toBe(409);
    expect(none.body.Message).toBe(
      `job ${queued} has no executions yet (it is Queued): there is no output to read until it is placed on a node`,
    );
    const printed = await cli(queued);
    expect(printed.code).toBe(1);
    expect(printed.stderr).toContain(`Error: job ${queued} has no executions yet`);
    const usage = await cli(queued, "--tail", "lots");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--tail must be a number of lines");
  }, 120_000);

  it("the CLI shows the control characters a job wrote as \\uXXXX (ESC[2J, colours, a window title, CR), --raw as written; describe and executions never print them raw", async () => {
    const command = String.raw`printf '\033[2Jcleared \033[31mred\033[0m \033]0;owned\007 tab\there\r\n'; printf '\033[1mbold\n' >&2`;
    const jobId = await jobs.submit(batch(command));
    await settled(jobs, jobId, ["Completed"]);
    const written = {
      stdout: "\u001b[2Jcleared \u001b[31mred\u001b[0m \u001b]0;owned\u0007 tab\there\r\n",
      stderr: "\u001b[1mbold\n",
    };
    const shown = await cli(jobId);
    expect(shown).toMatchObject({
      code: 0,
      stdout:
        String.raw`\u001b[2Jcleared \u001b[31mred\u001b[0m \u001b]0;owned\u0007 tab` +
        "\there" +
        String.raw`\u000d` +
        "\n",
      stderr: String.raw`\u001b[1mbold` + "\n",
    });
    expect(await cli(jobId, "--raw")).toMatchObject({ code: 0, ...written });
    expect(await cli(jobId, "--follow")).toMatchObject({ code: 0, stdout: shown.stdout, stderr: shown.stderr });

    const api = ["--api-host", "127.0.0.1", "--api-port", new URL(orchestrator.apiUrl).port, "--api-key", KEY];
    // No C0 control but newline and tab, no DEL or C1, no bidirectional control: nothing a terminal acts on.
    // eslint-disable-next-line no-control-regex
    const unsafe = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
    const commands = [
      ["job", "describe", jobId, "--output", "table"],
      ["job", "describe", jobId],
      ["job", "executions", jobId, "--output", "yaml"],
      ["job", "executions", jobId],
    ];
    for (const args of commands) {
      const res = await runShoal([...args, ...api]);
      expect(res.code, args.join(" ")).toBe(0);
      expect(res.stdout, args.join(" ")).not.toMatch(unsafe);
      expect(res.stderr, args.join(" ")).not.toMatch(unsafe);
    }
    const described = await runShoal(["job", "describe", jobId, "--output", "table", ...api]);
    expect(described.stdout).toContain(String.raw`\u001b[2Jcleared`);
    // The node's limits are the execution's ComputeState.Details, in the CLI's JSON too (the node's defaults here).
    const listed = JSON.parse(
      (await runShoal(["job", "executions", jobId, "--output", "json", ...api])).stdout,
    ) as Body[];
    expect(listed[0]!.ComputeState.Details).toMatchObject({
      "HostConfig.PidsLimit": "1024",
      "HostConfig.SecurityOpt": "no-new-privileges",
      "HostConfig.CapDrop": "ALL",
    });
  }, 120_000);

  it("is in the OpenAPI document, with its parameters", async () => {
    const doc = (await jobs.call("GET", "/api/v1/openapi.json")).body;
    const op = doc.paths["/api/v1/orchestrator/jobs/{id}/logs"]?.get as Body;
    expect(op.operationId).toBe("orchestrator/logs");
    expect((op.parameters as Body[]).map((p) => p.name).sort()).toEqual([
      "all_job_versions",
      "execution_id",
      "follow",
      "id",
      "job_version",
      "tail",
    ]);
  });
});

// Last: it stops the orchestrator.
describe("an orchestrator that stops", () => {
  it("ends its open log streams with an error message and a normal close, rather than holding its stop or cutting them off", async () => {
    const jobId = await jobs.submit(batch("echo started; sleep 60"));
    await executing(jobId);
    const received: Body[] = [];
    const socket = new WebSocket(
      `${orchestrator.apiUrl.replace(/^http/, "ws")}/api/v1/orchestrator/jobs/${jobId}/logs?follow=true`,
      { headers: auth(KEY) },
    );
    socket.on("message", (data) => received.push(JSON.parse(data.toString()) as Body));
    const closed = new Promise<number>((resolve) => socket.on("close", resolve));
    const live = { stdout: "" };
    const printed = runJobLogs(
      [jobId, "--follow", "--api-host", "127.0.0.1", "--api-port", new URL(orchestrator.apiUrl).port, "--api-key", KEY],
      live,
    );
    await waitFor(
      () => received.length > 0 && live.stdout !== "",
      30_000,
      () => `both readers have the first line (WebSocket ${received.length}, CLI ${JSON.stringify(live.stdout)})`,
    );
    await orchestrator.stop();
    expect(await closed).toBe(1000);
    const messages = received;
    expect(messages[0]).toEqual(out(1, "started\n"));
    expect(messages.at(-1)).toEqual({
      value: { Type: 0, Line: "" },
      error: "the orchestrator is stopping: read the logs again once it is back",
    });
    const cut = await printed;
    expect(cut.stdout).toBe("started\n");
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain("the orchestrator is stopping");
  }, 120_000);
});
