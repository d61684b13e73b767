import { describe, expect, it } from "vitest";
import { ShoalMetrics } from "../../../src/metrics/shoal-metrics.ts";
import { capturedLogger } from "../../support/captured-logger.ts";
import { silentLogger } from "../../support/fixtures.ts";
import { metricSamples } from "../../support/metric-samples.ts";

const samples = async (metrics: ShoalMetrics): Promise<Map<string, number>> => metricSamples(await metrics.scrape());

describe("ShoalMetrics collectors", () => {
  it("asks every registered collector on each scrape and adds up their answers", async () => {
    const metrics = new ShoalMetrics(silentLogger);
    let healthy = 2;
    metrics.registerCollector("nodes", () => [{ health: "HEALTHY", membership: "APPROVED", count: healthy }]);
    metrics.registerCollector("nodes", () => [
      { health: "HEALTHY", membership: "APPROVED", count: 1 },
      { health: "UNHEALTHY", membership: "PENDING", count: 4 },
    ]);
    metrics.registerCollector("actors", () => [{ entity: "node", resident: 10, passivated: 90 }]);
    metrics.registerCollector("actors", () => [{ entity: "job", resident: 3, passivated: 0 }]);
    let s = await samples(metrics);
    expect(s.get('shoal_nodes{health="HEALTHY",membership="APPROVED"}')).toBe(3);
    expect(s.get('shoal_nodes{health="UNHEALTHY",membership="PENDING"}')).toBe(4);
    expect(s.get('shoal_actors_resident{entity="node"}')).toBe(10);
    expect(s.get('shoal_actors_passivated{entity="node"}')).toBe(90);
    expect(s.get('shoal_actors_resident{entity="job"}')).toBe(3);
    healthy = 5;
    s = await samples(metrics);
    expect(s.get('shoal_nodes{health="HEALTHY",membership="APPROVED"}')).toBe(6);
  });

  it("drops the label sets a collector no longer reports, and a removed collector is no longer asked", async () => {
    const metrics = new ShoalMetrics(silentLogger);
    let processors = [
      { name: "node-views", position: 100, lag: 0 },
      { name: "nats-event-publisher", position: 90, lag: 10 },
    ];
    const remove = metrics.registerCollector("processors", () => processors);
    let s = await samples(metrics);
    expect(s.get('shoal_processor_lag_events{processor="nats-event-publisher"}')).toBe(10);
    expect(s.get('shoal_processor_position{processor="nats-event-publisher"}')).toBe(90);
    processors = [{ name: "node-views", position: 120, lag: 3 }];
    s = await samples(metrics);
    expect(s.get('shoal_processor_position{processor="node-views"}')).toBe(120);
    expect(s.get('shoal_processor_lag_events{processor="node-views"}')).toBe(3);
    expect(s.has('shoal_processor_lag_events{processor="nats-event-publisher"}')).toBe(false);
    remove();
    s = await samples(metrics);
    expect([...s.keys()].some((k) => k.startsWith("shoal_processor_"))).toBe(false);
  });

  it("shows the deadline gauge only once a scheduler reports, summing several", async () => {
    const metrics = new ShoalMetrics(silentLogger);
    expect((await samples(metrics)).has("shoal_deadlines_scheduled")).toBe(false);
    metrics.registerCollector("deadlines", () => 7);
    metrics.registerCollector("deadlines", () => 5);
    expect((await samples(metrics)).get("shoal_deadlines_scheduled")).toBe(12);
  });

  it("adds up the event stream's and the encoded-events cache's figures; the cache's counts are counters", async () => {
    const metrics = new ShoalMetrics(silentLogger);
    const stream = { clients: 3, bufferedBytes: 10, ringBytes: 20, catchingUp: 2, waitingForTurn: 1 };
    metrics.registerCollector("eventStream", () => stream);
    metrics.registerCollector("eventStream", () => ({ ...stream, catchingUp: 1, waitingForTurn: 4 }));
    let cache = { hits: 7, misses: 3, heldBytes: 4096 };
    metrics.registerCollector("encodedEvents", () => cache);
    let s = await samples(metrics);
    expect(s.get("shoal_event_stream_catching_up")).toBe(3);
    expect(s.get("shoal_event_stream_catch_up_waiting")).toBe(5);
    expect(s.get("shoal_event_stream_clients")).toBe(6);
    expect(s.get("shoal_encoded_events_hits_total")).toBe(7);
    expect(s.get("shoal_encoded_events_misses_total")).toBe(3);
    expect(s.get("shoal_encoded_events_bytes")).toBe(4096);
    cache = { hits: 12, misses: 3, heldBytes: 1024 };
    s = await samples(metrics);
    expect(s.get("shoal_encoded_events_hits_total")).toBe(12);
    expect(s.get("shoal_encoded_events_misses_total")).toBe(3);
    expect(s.get("shoal_encoded_events_bytes")).toBe(1024);
    const text = await metrics.scrape();
    expect(text).toContain("# TYPE shoal_encoded_events_hits_total counter");
    expect(text).toContain("# TYPE shoal_encoded_events_bytes gauge");
  });

  it("leaves a failing collector's figures out, logs why, and still answers the scrape", async () => {
    const { logger, messages } = capturedLogger();
    const metrics = new ShoalMetrics(logger);
    metrics.registerCollector("nodes", () => {
      throw new Error("read model gone");
    });
    metrics.registerCollector("actors", () => [{ entity: "node", resident: 1, passivated: 0 }]);
    const s = await samples(metrics);
    expect(s.get('shoal_actors_resident{entity="node"}')).toBe(1);
    expect([...s.keys()].some((k) => k.startsWith("shoal_nodes{"))).toBe(false);
    expect(messages("a metrics collector failed").map((m) => m.collector)).toEqual(["nodes"]);
  });
});

describe("ShoalMetrics push figures", () => {
  it("counts appends and commit batches, and keeps the highest position as the head", async () => {
    const metrics = new ShoalMetrics(silentLogger);
    metrics.observeHead(40);
    metrics.observeAppend(2, 42);
    metrics.observeAppend(1, 41); // an earlier append acknowledged late
    metrics.observeCommit(3);
    metrics.observeCommit(120);
    expect(metrics.headPosition).toBe(42);
    const s = await samples(metrics);
    expect(s.get("shoal_events_appended_total")).toBe(3);
    expect(s.get("shoal_store_commit_batch_size_count")).toBe(2);
    expect(s.get("shoal_store_commit_batch_size_sum")).toBe(123);
    expect(s.get('shoal_store_commit_batch_size_bucket{le="5"}')).toBe(1);
  });

  it("labels requests with the status class", async () => {
    const metrics = new ShoalMetrics(silentLogger);
    metrics.observeRequest("PUT", "/api/v1/orchestrator/nodes/:id", 412, 0.003);
    metrics.observeRequest("GET", "/api/v1/orchestrator/nodes", 200, 0.002);
    const s = await samples(metrics);
    expect(
      s.get(
        'shoal_http_request_duration_seconds_count{method="PUT",route="/api/v1/orchestrator/nodes/:id",status_class="4xx"}',
      ),
    ).toBe(1);
    expect(
      s.get(
        'shoal_http_request_duration_seconds_bucket{le="0.0025",method="GET",route="/api/v1/orchestrator/nodes",status_class="2xx"}',
      ),
    ).toBe(1);
  });
});

describe("ShoalMetrics heartbeats", () => {
  it("counts every heartbeat, added up at each scrape and never reset", async () => {
    const metrics = new ShoalMetrics(silentLogger);
    expect((await samples(metrics)).get("shoal_heartbeats_received_total")).toBe(0);
    for (let i = 0; i < 3; i++) metrics.heartbeatReceived();
    expect((await samples(metrics)).get("shoal_heartbeats_received_total")).toBe(3);
    expect((await samples(metrics)).get("shoal_heartbeats_received_total")).toBe(3);
    metrics.heartbeatReceived();
    metrics.heartbeatReceived();
    expect((await samples(metrics)).get("shoal_heartbeats_received_total")).toBe(5);
  });
});

describe("ShoalMetrics jobs, placements and restrictions", () => {
  it("reads jobs, the queue, executions, cordons and drains off their collectors, and counts placements", async () => {
    const metrics = new ShoalMetrics(silentLogger);
    metrics.registerCollector("jobs", () => [
      { type: "batch", state: "Queued", count: 2 },
      { type: "service", state: "Queued", count: 1 },
      { type: "batch", state: "Running", count: 5 },
    ]);
    metrics.registerCollector("executions", () => [{ state: "Running", count: 5 }]);
    metrics.registerCollector("nodeRestrictions", () => ({
      cordoned: 3,
      drains: [
        { status: "draining", count: 1 },
        { status: "drained", count: 0 },
      ],
    }));
    metrics.placed("batch", 250);
    metrics.placed("batch", undefined);
    metrics.placed("ops", 1500);
    const s = await samples(metrics);
    expect(s.get('shoal_jobs{type="batch",state="Queued"}')).toBe(2);
    expect(s.get("shoal_job_queue_depth")).toBe(3);
    expect(s.get('shoal_executions{state="Running"}')).toBe(5);
    expect(s.get("shoal_nodes_cordoned")).toBe(3);
    expect(s.get('shoal_node_drains{status="draining"}')).toBe(1);
    expect(s.get('shoal_node_drains{status="drained"}')).toBe(0);
    // Every placement counted under its job's type; only a first placement's wait observed.
    expect(s.get('shoal_placements_total{type="batch"}')).toBe(2);
    expect(s.get('shoal_placements_total{type="ops"}')).toBe(1);
    expect(s.get('shoal_placement_latency_seconds_count{type="batch"}')).toBe(1);
    expect(s.get('shoal_placement_latency_seconds_sum{type="batch"}')).toBe(0.25);
    expect(s.get('shoal_placement_latency_seconds_bucket{le="0.1",type="batch"}')).toBe(0);
    expect(s.get('shoal_placement_latency_seconds_bucket{le="0.25",type="batch"}')).toBe(1);
    expect(s.get('shoal_placement_latency_seconds_bucket{le="1",type="ops"}')).toBe(0);
    expect(s.get('shoal_placement_latency_seconds_bucket{le="2.5",type="ops"}')).toBe(1);
  });

  it("has a placement series for every job type before anything is placed", async () => {
    const s = await samples(new ShoalMetrics(silentLogger));
    for (const type of ["batch", "service", "daemon", "ops"]) {
      expect(s.get(`shoal_placements_total{type="${type}"}`), type).toBe(0);
      expect(s.get(`shoal_placement_latency_seconds_count{type="${type}"}`), type).toBe(0);
      expect(s.get(`shoal_placement_latency_seconds_bucket{le="+Inf",type="${type}"}`), type).toBe(0);
    }
    expect([...s.keys()].filter((k) => k.startsWith("shoal_placements_total"))).toHaveLength(4);
  });
});
