import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeAgentError, type ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { SHOAL_VERSION } from "../../src/version.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger } from "../support/fixtures.ts";
import { JobApiClient } from "../support/job-api-client.ts";
import { settled } from "../support/job-waits.ts";
import { metricSamples } from "../support/metric-samples.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { exposedNames, promqlMetricNames } from "../support/promql-metric-names.ts";
import { waitFor } from "../support/shoal-process.ts";
import { shellJob } from "../support/shell-job.ts";
import { startJoined } from "../support/start-joined.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * The job, execution, placement, queue, cordon and drain metrics of a real orchestrator (its own nats-server, SQLite,
 * HTTP), and a real compute node's own /metrics as it runs executions in the real Docker engine. Figures are compared
 * before and after what moves them: the suite's tests share one orchestrator.
 */
const KEY = "metrics-ops-key-0123456789abcdefgh";
/** The worker's Compute.Metrics.BearerToken: scraped as the orchestrator is, with a bearer token. */
const NODE_TOKEN = "node-metrics-token-0123456789+/=";
const USERS: AuthUser[] = [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["*"] }] }];
const MIB = 1024 * 1024;
const SUITE = `metrics-${randomUUID().slice(0, 6)}`;
const DASHBOARD = join(import.meta.dirname, "../../deploy/grafana/shoal-dashboard.json");

let image = "";
let orchestrator: RunningOrchestrator;
const agents: ComputeAgent[] = [];
let worker: ComputeAgent;
const workerId = `worker-${randomUUID().slice(0, 8)}`;
const idleId = `idle-${randomUUID().slice(0, 8)}`;

const api = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);

/** A Prometheus scrape: the text exposition, checked for its status and content type. */
async function exposition(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

const orchestratorText = () => exposition(`${orchestrator.apiUrl}/metrics`, { authorization: `Bearer ${KEY}` });
const computeText = () => exposition(worker.metricsUrl as string, { authorization: `Bearer ${NODE_TOKEN}` });

const scrape = async () => metricSamples(await orchestratorText());
const scrapeNode = async () => metricSamples(await computeText());
const value = (samples: Map<string, number>, key: string): number => samples.get(key) ?? NaN;
const BATCH_PLACEMENTS = 'shoal_placements_total{type="batch"}';
const OPS_PLACEMENTS = 'shoal_placements_total{type="ops"}';

/** A job (batch unless said) for this suite's nodes running `command`. */
const job = (command: string, extra: { timeouts?: Record<string, number>; suite?: string; type?: string } = {}) =>
  shellJob(image, command, {
    constraints: [{ Key: "suite", Operator: "=", Values: [extra.suite ?? SUITE] }],
    ...(extra.timeouts === undefined ? {} : { timeouts: extra.timeouts }),
    ...(extra.type === undefined ? {} : { type: extra.type }),
  });

beforeAll(async () => {
  image = await dockerTestImage();
  // A queue pass every second: a deadline that fires while the suite runs, whatever else does.
  const config = await ownNatsOrchestratorConfig("shoal-job-metrics-", {
    "API.Auth.Users": USERS,
    "Orchestrator.Scheduler.QueueBackoff": 1000,
  });
  orchestrator = await startOrchestrator(config, silentLogger);
  const executor = new DockerExecutor({
    nodeId: workerId,
    capacity: { cpuMillis: 1000, memoryBytes: 256 * MIB },
    logger: silentLogger,
    docker: new Docker(),
    stopGraceSeconds: 0,
  });
  worker = testAgent({
    nodeId: workerId,
    orchestrators: [orchestrator.natsUrl],
    token: orchestrator.joinToken.token,
    labels: { suite: SUITE },
    executor,
    metrics: { host: "127.0.0.1", port: 0, bearerToken: NODE_TOKEN },
  });
  agents.push(worker);
  await startJoined(worker, orchestrator.manager, workerId);
  // A node with no engine, for cordons and drains: it runs none of the suite's work.
  const idle = testAgent({
    nodeId: idleId,
    orchestrators: [orchestrator.natsUrl],
    token: orchestrator.joinToken.token,
  });
  agents.push(idle);
  await startJoined(idle, orchestrator.manager, idleId);
}, 60_000);

afterAll(async () => {
  for (const agent of agents) await agent.stop();
  await orchestrator?.stop();
  await removeContainersOf(workerId);
});

describe("job, execution and placement metrics", () => {
  // Given a compute node, when a job runs to its end: the job and execution gauges, the placements and their latency,
  // and the node's container starts and running executions move.
  it("counts a job that runs to its end, on the orchestrator and on its node", async () => {
    const before = await scrape();
    const nodeBefore = await scrapeNode();
    expect(value(nodeBefore, "shoal_compute_executions_running")).toBe(0);

    const jobId = await api.submit(job("sleep 2; echo done"));

    await waitFor(
      async () => value(await scrapeNode(), "shoal_compute_executions_running") === 1,
      30_000,
      () => "the execution running on the node",
    );
    const during = await scrape();
    expect(value(during, 'shoal_jobs{type="batch",state="Running"}')).toBe(
      value(before, 'shoal_jobs{type="batch",state="Running"}') + 1,
    );
    await settled(api, jobId, ["Completed"]);
    await waitFor(
      async () =>
        value(await scrape(), 'shoal_jobs{type="batch",state="Completed"}') ===
        value(before, 'shoal_jobs{type="batch",state="Completed"}') + 1,
      10_000,
      () => "the completed job in the job read model",
    );
    const after = await scrape();
    expect(value(after, 'shoal_jobs{type="batch",state="Running"}')).toBe(
      value(before, 'shoal_jobs{type="batch",state="Running"}'),
    );
    expect(value(after, 'shoal_executions{state="Completed"}')).toBe(
      value(before, 'shoal_executions{state="Completed"}') + 1,
    );
    expect(value(after, BATCH_PLACEMENTS)).toBe(value(before, BATCH_PLACEMENTS) + 1);
    expect(value(after, 'shoal_placement_latency_seconds_count{type="batch"}')).toBe(
      value(before, 'shoal_placement_latency_seconds_count{type="batch"}') + 1,
    );
    // Placed at once: well within the first buckets, and counted in the 10 s one.
    expect(value(after, 'shoal_placement_latency_seconds_bucket{le="10",type="batch"}')).toBe(
      value(before, 'shoal_placement_latency_seconds_bucket{le="10",type="batch"}') + 1,
    );
    // A batch job's placement is not an ops job's.
    expect(value(after, OPS_PLACEMENTS)).toBe(value(before, OPS_PLACEMENTS));

    const nodeAfter = await scrapeNode();
    expect(value(nodeAfter, "shoal_compute_container_starts_total")).toBe(
      value(nodeBefore, "shoal_compute_container_starts_total") + 1,
    );
    expect(value(nodeAfter, "shoal_compute_executions_running")).toBe(0);
    expect(value(nodeAfter, 'shoal_compute_execution_failures_total{reason="non-zero-exit"}')).toBe(
      value(nodeBefore, 'shoal_compute_execution_failures_total{reason="non-zero-exit"}'),
    );
  });

  // Given a compute node, when an ops job runs on it: its placement and its wait are counted under type ops, every
  // type's series there from the first scrape.
  it("counts placements and their wait by job type", async () => {
    const before = await scrape();
    for (const type of ["batch", "service", "daemon", "ops"]) {
      expect(before.has(`shoal_placements_total{type="${type}"}`), type).toBe(true);
      expect(before.has(`shoal_placement_latency_seconds_count{type="${type}"}`), type).toBe(true);
    }
    // Only the suite's worker matches: one execution, on it.
    const jobId = await api.submit(job("echo ops", { type: "ops" }));
    await settled(api, jobId, ["Completed"]);
    const after = await scrape();
    expect(value(after, OPS_PLACEMENTS)).toBe(value(before, OPS_PLACEMENTS) + 1);
    expect(value(after, 'shoal_placement_latency_seconds_count{type="ops"}')).toBe(
      value(before, 'shoal_placement_latency_seconds_count{type="ops"}') + 1,
    );
    expect(value(after, BATCH_PLACEMENTS)).toBe(value(before, BATCH_PLACEMENTS));
    expect(value(after, 'shoal_placements_total{type="service"}')).toBe(0);
    expect(value(after, 'shoal_placements_total{type="daemon"}')).toBe(0);
  });

  // Given a compute node, when a command exits non-zero: the node counts the failure by its reason, the orchestrator
  // a failed execution.
  it("counts a failed execution by its reason, never by its text", async () => {
    const before = await scrape();
    const nodeBefore = await scrapeNode();
    const reasons = [...nodeBefore.keys()].filter((k) => k.startsWith("shoal_compute_execution_failures_total{"));
    // The closed set, every reason from the start.
    expect(reasons.map((k) => /reason="([^"]+)"/.exec(k)?.[1]).sort()).toEqual([
      "engine-failed",
      "image-missing",
      "input-failed",
      "lost",
      "non-zero-exit",
      "oom-killed",
      "publish-failed",
      "refused",
      "rejected-by-engine",
      "timeout",
    ]);

    const jobId = await api.submit(job("echo failing >&2; exit 3"));
    await settled(api, jobId, ["Failed"]);

    await waitFor(
      async () =>
        value(await scrapeNode(), 'shoal_compute_execution_failures_total{reason="non-zero-exit"}') >=
        value(nodeBefore, 'shoal_compute_execution_failures_total{reason="non-zero-exit"}') + 1,
      10_000,
      () => "the failure counted by the node",
    );
    const nodeText = await computeText();
    expect(nodeText).not.toContain("failing");
    await waitFor(
      async () =>
        value(await scrape(), 'shoal_executions{state="Failed"}') >=
        value(before, 'shoal_executions{state="Failed"}') + 1,
      10_000,
      () => "the failed execution in the job read model",
    );
    expect(value(await scrape(), 'shoal_jobs{type="batch",state="Failed"}')).toBe(
      value(before, 'shoal_jobs{type="batch",state="Failed"}') + 1,
    );
  });

  // Given no node that can take it, when a job with a queue timeout is submitted: it counts in the queue depth until
  // it is stopped.
  it("counts a queued job in the queue depth until it is stopped", async () => {
    const before = await scrape();
    expect(value(before, "shoal_job_queue_depth")).toBe(0);
    const jobId = await api.submit(job("true", { suite: "nobody", timeouts: { QueueTimeout: 600 } }));
    await settled(api, jobId, ["Queued"]);
    const queued = await scrape();
    expect(value(queued, "shoal_job_queue_depth")).toBe(1);
    expect(value(queued, 'shoal_jobs{type="batch",state="Queued"}')).toBe(1);
    // Nothing was placed for it.
    expect(value(queued, BATCH_PLACEMENTS)).toBe(value(before, BATCH_PLACEMENTS));

    const stop = await api.call("DELETE", `/api/v1/orchestrator/jobs/${jobId}?reason=metrics+test`);
    expect(stop.status, stop.text).toBe(200);
    await settled(api, jobId, ["Stopped"]);
    await waitFor(
      async () => value(await scrape(), "shoal_job_queue_depth") === 0,
      10_000,
      () => "the stopped job out of the queue",
    );
    expect(value(await scrape(), 'shoal_jobs{type="batch",state="Stopped"}')).toBe(
      value(before, 'shoal_jobs{type="batch",state="Stopped"}') + 1,
    );
  });
});

describe("cordon and drain metrics", () => {
  const act = async (body: Record<string, unknown>) => {
    const res = await api.call("PUT", `/api/v1/orchestrator/nodes/${idleId}`, body);
    expect(res.status, res.text).toBe(200);
  };
  const until = (what: string, check: (s: Map<string, number>) => boolean) =>
    waitFor(
      async () => check(await scrape()),
      10_000,
      () => what,
    );

  // Given an idle node, when it is cordoned, drained, then released: the cordon and drain gauges follow.
  it("counts a cordon and a drain while they are in force", async () => {
    const before = await scrape();
    expect(value(before, "shoal_nodes_cordoned")).toBe(0);
    for (const status of ["draining", "drained", "expired"])
      expect(value(before, `shoal_node_drains{status="${status}"}`), status).toBe(0);

    await act({ Action: "cordon", Message: "disk check" });
    await until("one node cordoned", (s) => value(s, "shoal_nodes_cordoned") === 1);

    // Nothing runs on it: the drain completes at once, and the node stays drained until undrained.
    await act({ Action: "drain", Deadline: "10m", Message: "kernel upgrade" });
    await until("one node drained", (s) => value(s, 'shoal_node_drains{status="drained"}') === 1);
    const drained = await scrape();
    expect(value(drained, "shoal_nodes_cordoned")).toBe(1);
    expect(value(drained, 'shoal_node_drains{status="draining"}')).toBe(0);

    await act({ Action: "undrain" });
    await act({ Action: "uncordon" });
    await until(
      "no cordon, no drain",
      (s) => value(s, "shoal_nodes_cordoned") === 0 && value(s, 'shoal_node_drains{status="drained"}') === 0,
    );
  });
});

describe("build info, deadlines and the event-loop gauges", () => {
  it("say which version and role each process is, time deadlines, keep one set of event-loop gauges", async () => {
    const text = await orchestratorText();
    const samples = metricSamples(text);
    expect(
      value(samples, `shoal_build_info{version="${SHOAL_VERSION}",nodejs="${process.version}",role="orchestrator"}`),
    ).toBe(1);
    const node = await scrapeNode();
    expect(value(node, `shoal_build_info{version="${SHOAL_VERSION}",nodejs="${process.version}",role="compute"}`)).toBe(
      1,
    );

    // The queue pass fires every second.
    const fired = value(samples, "shoal_deadline_lateness_seconds_count");
    await waitFor(
      async () => value(await scrape(), "shoal_deadline_lateness_seconds_count") > fired,
      10_000,
      () => "a deadline fired",
    );

    expect(text).toContain("shoal_event_loop_lag_max_seconds");
    expect(text).not.toContain("nodejs_eventloop_lag");
    expect(await computeText()).not.toContain("nodejs_eventloop_lag");
  });

  it("a compute node whose metrics port is taken does not start, and says which key to change", async () => {
    const taken = Number(new URL(worker.metricsUrl as string).port);
    const agent = testAgent({
      nodeId: `taken-${randomUUID().slice(0, 8)}`,
      orchestrators: [orchestrator.natsUrl],
      token: orchestrator.joinToken.token,
      metrics: { host: "127.0.0.1", port: taken },
    });
    try {
      await expect(agent.start()).rejects.toThrow(
        new ComputeAgentError(`Compute.Metrics.Port ${taken} is already in use on 127.0.0.1; choose another`),
      );
    } finally {
      await agent.stop();
    }
  });

  it("the compute node's metrics server answers /metrics and nothing else", async () => {
    const base = (worker.metricsUrl as string).replace(/\/metrics$/, "");
    const authorization = `Bearer ${NODE_TOKEN}`;
    expect((await fetch(`${base}/`, { headers: { authorization } })).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: "POST", headers: { authorization } })).status).toBe(405);
  });

  // Given a node with Compute.Metrics.BearerToken, when a scraper comes without it or with another: a 401 that says
  // what to send, and nothing else (no metrics, not even which paths exist).
  it("the compute node's /metrics refuses a request without its bearer token, with a 401 and a challenge", async () => {
    const url = worker.metricsUrl as string;
    const refused = async (init: RequestInit, target = url) => {
      const res = await fetch(target, init);
      const body = await res.text();
      expect(res.status, body).toBe(401);
      expect(body).not.toContain("shoal_");
      return { challenge: res.headers.get("www-authenticate"), body };
    };
    const none = await refused({});
    expect(none.challenge).toBe('Bearer realm="shoal-metrics"');
    expect(none.body).toBe(
      "401 Unauthorized: this node's /metrics needs Authorization: Bearer <Compute.Metrics.BearerToken>\n",
    );
    for (const authorization of [
      `Bearer ${NODE_TOKEN}x`,
      `Bearer ${KEY}`,
      `Basic ${btoa(`ops:${NODE_TOKEN}`)}`,
      NODE_TOKEN,
    ]) {
      const wrong = await refused({ headers: { authorization } });
      expect(wrong.challenge, authorization).toBe('Bearer realm="shoal-metrics", error="invalid_token"');
      expect(wrong.body).toBe("401 Unauthorized: the bearer token is not this node's Compute.Metrics.BearerToken\n");
    }
    await refused({ method: "HEAD" });
    await refused({ method: "POST" });
    await refused({}, url.replace(/\/metrics$/, "/"));
    // The scheme is case-insensitive (RFC 7235), as Prometheus and curl may send it.
    expect((await fetch(url, { headers: { authorization: `bearer ${NODE_TOKEN}` } })).status).toBe(200);
  });
});

describe("the Grafana dashboard", () => {
  it("names only metrics that a running orchestrator and compute node expose", async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
      panels: { type: string; title: string; targets?: { expr: string }[] }[];
    };
    const exposed = new Set([...exposedNames(await orchestratorText()), ...exposedNames(await computeText())]);
    const panels = dashboard.panels.filter((p) => p.type !== "row");
    expect(panels.length).toBeGreaterThan(10);
    const unknown: string[] = [];
    const named = new Set<string>();
    for (const panel of panels) {
      expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
      for (const { expr } of panel.targets ?? []) {
        const names = promqlMetricNames(expr);
        expect(names.length, `${panel.title}: ${expr}`).toBeGreaterThan(0);
        for (const name of names) {
          named.add(name);
          if (!exposed.has(name)) unknown.push(`${panel.title}: ${name}`);
        }
      }
    }
    expect(unknown).toEqual([]);
    // The compute node's figures are on it too, not only the orchestrator's.
    expect(named).toContain("shoal_compute_executions_running");
    expect(named).toContain("shoal_job_queue_depth");
  });
});
