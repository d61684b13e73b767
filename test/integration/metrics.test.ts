import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataIds, openSse } from "../support/sse-client.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { metricSamples } from "../support/metric-samples.ts";
import { freePort } from "../support/nats-server.ts";
import { killLater, readPid } from "../support/processes.ts";
import { waitFor } from "../support/shoal-process.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * /metrics of a real orchestrator (embedded nats-server, SQLite, HTTP) with real compute agents
 * heartbeating: the figures move with the traffic that causes them.
 */

const SCRAPER_KEY = "prometheus-key-0123456789abcdef";
const VIEWER_KEY = "viewer-key-0123456789abcdefghij";
const OPS_KEY = "ops-key-0123456789abcdefghijklm";
const USERS: AuthUser[] = [
  { Alias: "prometheus", APIKey: SCRAPER_KEY, Capabilities: [{ Actions: ["read:agent"] }] },
  { Alias: "viewer", APIKey: VIEWER_KEY, Capabilities: [{ Actions: ["read:node"] }] },
  { Alias: "ops", APIKey: OPS_KEY, Capabilities: [{ Actions: ["*"] }] },
];

let orchestrator: RunningOrchestrator;
let pidFile: string;
const agents: ComputeAgent[] = [];
const cleanups: (() => unknown)[] = [];

async function call(method: string, path: string, key?: string, body?: unknown) {
  const res = await fetch(`${orchestrator.apiUrl}${path}`, {
    method,
    headers: {
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

async function scrape(): Promise<Map<string, number>> {
  const res = await call("GET", "/metrics", SCRAPER_KEY);
  expect(res.status).toBe(200);
  return metricSamples(res.text);
}

const value = (samples: Map<string, number>, key: string): number => samples.get(key) ?? NaN;

beforeAll(async () => {
  const dataDir = tempDir();
  // The embedded nats-server (no Orchestrator.NATS.URL), on a port of its own.
  orchestrator = await startOrchestrator(
    orchestratorConfig("", {
      DataDir: dataDir,
      "Orchestrator.Host": "127.0.0.1",
      "Orchestrator.Port": await freePort(),
      "API.Auth.Users": USERS,
    }),
    silentLogger,
  );
  pidFile = join(dataDir, "nats", "nats-server.pid");
  cleanups.push(killLater(readPid(pidFile)));
  for (const nodeId of ["edge-1", "edge-2"]) {
    const agent = testAgent({ nodeId, orchestrators: [orchestrator.natsUrl], token: orchestrator.joinToken.token });
    agents.push(agent);
    await agent.start();
  }
});

afterAll(async () => {
  for (const agent of agents) await agent.stop();
  await orchestrator?.stop();
  for (const c of cleanups) c();
});

describe("GET /metrics", () => {
  it("is for a caller with read:agent: anonymous callers and read:node alone are refused", async () => {
    expect((await call("GET", "/metrics")).status).toBe(401);
    expect((await call("GET", "/metrics", VIEWER_KEY)).status).toBe(403);
    const ok = await call("GET", "/metrics", SCRAPER_KEY);
    expect(ok.status).toBe(200);
    expect(ok.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const doc = JSON.parse((await call("GET", "/api/v1/openapi.json")).text);
    expect(doc.paths["/metrics"].get).toMatchObject({
      security: [{ basicAuth: [] }, { apiKey: [] }],
      "x-shoal-capability": "read:agent",
    });
  });

  it("counts heartbeats as they arrive and shows nodes by health and membership", async () => {
    await waitFor(
      async () => value(await scrape(), 'shoal_nodes{health="HEALTHY",membership="APPROVED"}') === 3,
      10_000,
      () => "the two agents and the orchestrator, healthy and approved",
    );
    const before = value(await scrape(), "shoal_heartbeats_received_total");
    // Two agents heartbeat every 200 ms.
    await waitFor(
      async () => value(await scrape(), "shoal_heartbeats_received_total") >= before + 6,
      10_000,
      () => "six more heartbeats",
    );
    const samples = await scrape();
    expect(value(samples, 'shoal_actors_resident{entity="node"}')).toBe(3);
    expect(value(samples, 'shoal_actors_passivated{entity="node"}')).toBe(0);
  });

  it("counts every entity kind's actors: nodes, jobs and executions, each by its kind", async () => {
    const before = await scrape();
    for (const entity of ["job", "execution"]) {
      expect(value(before, `shoal_actors_resident{entity="${entity}"}`), entity).toBe(0);
      expect(value(before, `shoal_actors_passivated{entity="${entity}"}`), entity).toBe(0);
    }
    const job = {
      Type: "batch",
      Tasks: [
        { Name: "main", Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1", Parameters: ["true"] } } },
      ],
    };
    const res = await call("PUT", "/api/v1/orchestrator/jobs", OPS_KEY, { Job: job });
    expect(res.status, res.text).toBe(200);
    // The job's actor stored its submission and stays in memory (idle for far less than its idle timeout).
    const after = await scrape();
    expect(value(after, 'shoal_actors_resident{entity="job"}')).toBe(1);
    expect(value(after, 'shoal_actors_passivated{entity="job"}')).toBe(0);
    expect(value(after, 'shoal_actors_resident{entity="node"}')).toBe(3);
  });

  it("counts appended events, and each processor's position catches up with them (lag 0)", async () => {
    const before = await scrape();
    const appended = value(before, "shoal_events_appended_total");
    expect(appended).toBeGreaterThan(0); // registrations and approvals
    const commits = value(before, "shoal_store_commit_batch_size_count");
    expect(commits).toBeGreaterThan(0);
    expect((await call("PUT", "/api/v1/orchestrator/nodes/edge-2", OPS_KEY, { Action: "reject" })).status).toBe(200);
    await waitFor(
      async () => value(await scrape(), 'shoal_nodes{health="HEALTHY",membership="REJECTED"}') === 1,
      10_000,
      () => "edge-2 rejected",
    );
    await waitFor(
      async () => {
        const s = await scrape();
        return (
          value(s, 'shoal_processor_lag_events{processor="node-views"}') === 0 &&
          value(s, 'shoal_processor_lag_events{processor="nats-event-publisher"}') === 0
        );
      },
      10_000,
      () => "both processors at the head",
    );
    const after = await scrape();
    expect(value(after, "shoal_events_appended_total")).toBeGreaterThan(appended);
    expect(value(after, "shoal_store_commit_batch_size_count")).toBeGreaterThan(commits);
    // Every appended event was in one of the commits the histogram saw.
    expect(value(after, "shoal_store_commit_batch_size_sum")).toBe(value(after, "shoal_events_appended_total"));
    const head = value(after, 'shoal_processor_position{processor="node-views"}');
    expect(head).toBeGreaterThan(0);
    expect(value(after, 'shoal_processor_position{processor="nats-event-publisher"}')).toBe(head);
    expect(value(after, 'shoal_nodes{health="HEALTHY",membership="APPROVED"}')).toBe(2);
  });

  it("times REST requests by route pattern, method and status class, never by raw URL", async () => {
    for (let i = 0; i < 3; i++)
      expect((await call("GET", "/api/v1/orchestrator/nodes/edge-1", VIEWER_KEY)).status).toBe(200);
    expect((await call("GET", "/api/v1/orchestrator/nodes/no-such-node", VIEWER_KEY)).status).toBe(404);
    expect((await call("GET", "/no/such/path/unmatched-route-x", OPS_KEY)).status).toBe(404);
    const res = await call("GET", "/metrics", SCRAPER_KEY);
    expect(res.text).not.toContain("edge-1");
    expect(res.text).not.toContain("no-such-node");
    expect(res.text).not.toContain("unmatched-route-x");
    const samples = await scrape();
    const count = (labels: string) => value(samples, `shoal_http_request_duration_seconds_count{${labels}}`);
    expect(count('method="GET",route="/api/v1/orchestrator/nodes/:id",status_class="2xx"')).toBeGreaterThanOrEqual(3);
    expect(count('method="GET",route="/api/v1/orchestrator/nodes/:id",status_class="4xx"')).toBeGreaterThanOrEqual(1);
    expect(count('method="GET",route="unmatched",status_class="4xx"')).toBeGreaterThanOrEqual(1);
    expect(count('method="GET",route="/metrics",status_class="4xx"')).toBeGreaterThanOrEqual(2); // the refused scrapes
  });

  it("reports event-loop lag and the process's own metrics", async () => {
    const samples = await scrape();
    for (const name of [
      "shoal_event_loop_lag_p50_seconds",
      "shoal_event_loop_lag_p99_seconds",
      "shoal_event_loop_lag_max_seconds",
    ]) {
      expect(value(samples, name), name).toBeGreaterThanOrEqual(0);
    }
    expect(value(samples, "shoal_event_loop_lag_p99_seconds")).toBeLessThanOrEqual(
      value(samples, "shoal_event_loop_lag_max_seconds"),
    );
    expect(value(samples, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(samples.has("nodejs_heap_size_used_bytes")).toBe(true);
  });

  it("reports the event stream's clients, their bytes, its ring and catch-up turns, the encoded events", async () => {
    const before = await scrape();
    expect(value(before, "shoal_event_stream_clients")).toBe(0);
    expect(value(before, "shoal_event_stream_cutoffs_total")).toBe(0);
    expect(value(before, "shoal_event_stream_catching_up")).toBe(0);
    expect(value(before, "shoal_event_stream_catch_up_waiting")).toBe(0);
    // The publisher encoded every event so far, and the cache holds them all (far less than its bound).
    const published = orchestrator.publisher.position;
    const misses = value(before, "shoal_encoded_events_misses_total");
    expect(misses).toBeGreaterThan(0);
    expect(value(before, "shoal_encoded_events_bytes")).toBeGreaterThan(0);
    const hits = value(before, "shoal_encoded_events_hits_total");
    const client = await openSse(`${orchestrator.apiUrl}/api/v1/orchestrator/events/stream?after=0`, {
      headers: { authorization: `Bearer ${OPS_KEY}` },
    });
    try {
      await client.until((m) => Number(m.at(-1)?.id) >= published);
      const during = await scrape();
      expect(value(during, "shoal_event_stream_clients")).toBe(1);
      expect(value(during, "shoal_event_stream_buffered_bytes")).toBeGreaterThanOrEqual(0);
      expect(value(during, "shoal_event_stream_ring_bytes")).toBeGreaterThanOrEqual(0);
      // Live now: its turn given back, and nobody in line.
      expect(value(during, "shoal_event_stream_catching_up")).toBe(0);
      expect(value(during, "shoal_event_stream_catch_up_waiting")).toBe(0);
      // Caught up from the store with the messages the publisher had encoded: none of those encoded again.
      const held = dataIds(client.messages).filter((id) => id <= published).length;
      expect(held).toBeGreaterThan(0);
      expect(value(during, "shoal_encoded_events_hits_total") - hits).toBeGreaterThanOrEqual(held);
      expect(value(during, "shoal_encoded_events_misses_total")).toBeGreaterThanOrEqual(misses);
    } finally {
      client.close();
    }
    await waitFor(
      async () => value(await scrape(), "shoal_event_stream_clients") === 0,
      10_000,
      () => "the client gone",
    );
  });

  it("counts the orchestrator's NATS reconnects, and heartbeats keep being counted after one", async () => {
    const before = await scrape();
    expect(value(before, "shoal_nats_reconnects_total")).toBe(0);
    const pid = readPid(pidFile);
    process.kill(pid, "SIGKILL");
    await waitFor(
      async () => value(await scrape(), "shoal_nats_reconnects_total") === 1,
      20_000,
      () => "a reconnect to the restarted nats-server",
    );
    cleanups.push(killLater(readPid(pidFile)));
    const heartbeats = value(await scrape(), "shoal_heartbeats_received_total");
    await waitFor(
      async () => value(await scrape(), "shoal_heartbeats_received_total") >= heartbeats + 4,
      20_000,
      () => "heartbeats after the reconnect",
    );
  });
});
