import { readFileSync } from "node:fs";
import type { KV } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeForwardedAnswer } from "../../src/cluster/forwarded-command.ts";
import { partitionCommandsSubject } from "../../src/cluster/owner-commands.ts";
import { partitionOf } from "../../src/cluster/partition-of.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import type { ComputeAgent, ComputeAgentOptions } from "../../src/compute/compute-agent.ts";
import { pino } from "pino";
import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { jobStream } from "../../src/events/streams.ts";
import { SimExecutor } from "../../src/sim/sim-executor.ts";
import { LEASE_BUCKET } from "../../src/orchestrator/modules/cluster-module.ts";
import { type RunningOrchestrator, startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";
import { JobApiClient } from "../support/job-api-client.ts";
import { metricSamples } from "../support/metric-samples.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";
import { shellJob } from "../support/shell-job.ts";
import { testAgent } from "../support/test-agent.ts";
import { waitFor } from "../support/shoal-process.ts";
import { encode } from "../../src/transport/codec.ts";

const PARTITIONS = 4;
const NODES = ["c-1", "c-2", "c-3", "c-4", "c-5", "c-6"];
const nats = natsPerSuite();
let standIn: KurrentStandIn;
let store: EsdbEventStore;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  standIn = await KurrentStandIn.start();
  store = await EsdbEventStore.open(standIn.url);
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await store?.close();
  await standIn?.close();
});

const clusterConfig = (nodeId: string, extra: Partial<ShoalConfig> = {}) =>
  orchestratorConfig(nats.url, {
    NodeID: nodeId,
    "EventStore.URL": standIn.url,
    "Orchestrator.Cluster.Enabled": true,
    "Orchestrator.Cluster.Partitions": PARTITIONS,
    "Orchestrator.Cluster.Replicas": 1,
    "Orchestrator.Auth.Token": "join-me",
    // Long enough that a loaded machine's pauses (the agents share this process) are not read as silence.
    "Orchestrator.NodeManager.DisconnectTimeout": 4_000,
    "Orchestrator.NodeManager.UnknownTimeout": 60_000,
    ...extra,
  });

async function orchestrator(nodeId: string, extra: Partial<ShoalConfig> = {}): Promise<RunningOrchestrator> {
  const running = await startOrchestrator(
    clusterConfig(nodeId, extra),
    process.env.DEBUG_CLUSTER ? pino({ level: "info" }).child({ o: nodeId }) : silentLogger,
  );
  cleanups.push(() => running.stop());
  return running;
}

function agent(nodeId: string, options: Partial<ComputeAgentOptions> = {}): ComputeAgent {
  const a = testAgent({ nodeId, orchestrators: [nats.url], token: "join-me", dataDir: tempDir(), ...options });
  cleanups.push(() => a.stop());
  return a;
}

/** Which orchestrator holds each partition's lease now, by its node id (the lease's value is `<node id>/<start>`). */
async function owners(kv: KV): Promise<(string | undefined)[]> {
  const held: (string | undefined)[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const entry = await kv.get(`partitions.${p}`);
    held.push(entry?.operation === "PUT" ? new TextDecoder().decode(entry.value).split("/")[0] : undefined);
  }
  return held;
}

const healthEvents = async (nodeId: string): Promise<RecordedEvent[]> =>
  (await store.readStream(`node-${nodeId}`)).filter(
    (e) => e.type === "NodeBecameUnhealthy" || e.type === "NodeBecameHealthy",
  );

/** The admin key `serve` generated under the orchestrator's DataDir: what an operator on its machine uses. */
const adminKeyOf = (via: RunningOrchestrator) => readFileSync(via.adminKey?.path ?? "", "utf8").trim();

/** The jobs API of one orchestrator, as its operator. */
function jobApi(via: RunningOrchestrator): JobApiClient {
  const key = adminKeyOf(via);
  return new JobApiClient(
    () => via.apiUrl,
    () => key,
  );
}

/** A REST call as an operator makes it, with the orchestrator's admin key and any headers (If-Match). */
async function rest(via: RunningOrchestrator, method: string, path: string, body?: unknown, headers = {}) {
  const key = adminKeyOf(via);
  const res = await fetch(`${via.apiUrl}/api/v1/orchestrator${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

const leaseOf = (e: RecordedEvent | undefined) =>
  (e?.metadata as { lease?: { partition: number; epoch: number } } | undefined)?.lease;

describe("several orchestrators", () => {
  it("refuses the embedded SQLite store and nats-server in cluster mode, saying what to set", async () => {
    const refused = await startOrchestrator(
      {
        ...orchestratorConfig("", { "Orchestrator.Cluster.Enabled": true }),
      },
      silentLogger,
    ).catch((e: unknown) => e);
    expect((refused as Error).message).toContain("EventStore.URL is empty");
    expect((refused as Error).message).toContain("Orchestrator.NATS.URL is empty");
  });

  it("splits the partitions; only a node's owner marks it UNHEALTHY, under its lease; a stopping owner hands over", async () => {
    const a = await orchestrator("orch-a");
    const b = await orchestrator("orch-b");
    const kv = await nats.nc.jetstream().views.kv(LEASE_BUCKET);
    // Each takes its fair share once it hears the other.
    await waitFor(async () => {
      const held = await owners(kv);
      return held.filter((o) => o === "orch-a").length === 2 && held.filter((o) => o === "orch-b").length === 2;
    }, 15_000);

    // /metrics of each shows its part: two partitions, two members, and which duties it runs (each runs on one).
    const figures = await Promise.all(
      [a, b].map(async (o) => {
        const res = await fetch(`${o.apiUrl}/metrics`, { headers: { authorization: `Bearer ${adminKeyOf(o)}` } });
        return metricSamples(await res.text());
      }),
    );
    for (const f of figures) {
      expect(f.get("shoal_cluster_partitions_held")).toBe(2);
      expect(f.get("shoal_cluster_members")).toBe(2);
    }
    for (const duty of ["publisher", "jobs"])
      expect(figures.map((f) => f.get(`shoal_cluster_duty_held{duty="${duty}"}`)).sort()).toEqual([0, 1]);

    const agents = new Map(NODES.map((id) => [id, agent(id)]));
    await Promise.all([...agents.values()].map((x) => x.start()));
    const held = await owners(kv);
    const ownerOf = (id: string) => held[partitionOf(id, PARTITIONS)];
    const ofA = NODES.filter((id) => ownerOf(id) === "orch-a");
    const ofB = NODES.filter((id) => ownerOf(id) === "orch-b");
    expect(ofA.length).toBeGreaterThan(0);
    expect(ofB.length).toBeGreaterThan(0);

    // A node of A's goes silent: A alone writes it UNHEALTHY, recording its partition and epoch.
    const silentOfA = ofA[0] as string;
    await agents.get(silentOfA)?.stop();
    await waitFor(async () => (await healthEvents(silentOfA)).length > 0, 15_000);
    const before = await healthEvents(silentOfA);
    expect(before.map((e) => e.type)).toEqual(["NodeBecameUnhealthy"]);
    const firstLease = leaseOf(before[0]);
    expect(firstLease?.partition).toBe(partitionOf(silentOfA, PARTITIONS));
    expect(firstLease?.epoch).toBeGreaterThan(0);

    // A stops: B takes A's partitions at once (handed back, not waited out).
    await a.stop();
    await waitFor(async () => (await owners(kv)).every((o) => o === "orch-b"), 5_000);
    const silentOfB = ofA[1] ?? (ofB[0] as string);
    await agents.get(silentOfB)?.stop();
    await waitFor(async () => (await healthEvents(silentOfB)).length > 0, 15_000);
    const [changed] = await healthEvents(silentOfB);
    expect(changed?.type).toBe("NodeBecameUnhealthy");
    const lease = leaseOf(changed);
    expect(lease?.partition).toBe(partitionOf(silentOfB, PARTITIONS));
    // A partition that changed hands has a later epoch than any its former owner wrote under.
    if (lease?.partition === firstLease?.partition) expect(lease?.epoch).toBeGreaterThan(firstLease?.epoch ?? 0);

    // Nobody blamed the nodes still heartbeating, for all the handing over; the first silent one was not marked twice.
    for (const id of NODES.filter((n) => n !== silentOfA && n !== silentOfB))
      expect(await healthEvents(id)).toEqual([]);
    expect((await healthEvents(silentOfA)).map((e) => e.type)).toEqual(["NodeBecameUnhealthy"]);

    // A's clean stop marked its own node stopped; B, which still runs, was never marked.
    expect((await healthEvents("orch-a")).map((e) => e.type)).toEqual(["NodeBecameUnhealthy"]);
    expect(await healthEvents("orch-b")).toEqual([]);

    // The publisher ran on one orchestrator at a time: each node's registration is on SHOAL_EVENTS once.
    const jsm = await nats.nc.jetstreamManager();
    await waitFor(async () => {
      const info = await jsm.streams.info("SHOAL_EVENTS", {
        subjects_filter: "shoal.events.node.*.NodeBecameUnhealthy",
      });
      // The two silent compute nodes and orch-a.
      return Object.keys(info.state.subjects ?? {}).length === 3;
    }, 10_000);
    const registered = await jsm.streams.info("SHOAL_EVENTS", {
      subjects_filter: "shoal.events.node.*.NodeRegistered",
    });
    for (const id of NODES) expect(registered.state.subjects?.[`shoal.events.node.${id}.NodeRegistered`]).toBe(1);
    await b.stop();
  });

  it("runs the jobs duty on one of them: a job submitted to either times out of the queue once", async () => {
    const a = await orchestrator("orch-c");
    const b = await orchestrator("orch-d");
    const kv = await nats.nc.jetstream().views.kv(LEASE_BUCKET);
    await waitFor(async () => (await owners(kv)).filter((o) => o === "orch-d").length === 2, 15_000);
    for (const [i, via] of [a, b].entries()) {
      const api = jobApi(via);
      const spec = shellJob("busybox", "true", {
        constraints: [{ Key: "zone", Operator: "=", Values: [`nowhere-${i}`] }],
        timeouts: { QueueTimeout: 1 },
      });
      const submitted = await api.call("PUT", "/api/v1/orchestrator/jobs", { Job: spec });
      expect(submitted.status).toBe(200);
      const jobId = submitted.body.JobID as string;
      const failed = async () => (await store.readStream(jobStream(jobId))).filter((e) => e.type === "JobFailed");
      await waitFor(async () => (await failed()).length > 0, 10_000);
      // Either orchestrator may have armed its QueueTimeout; it failed once.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await failed()).toHaveLength(1);
    }
    await a.stop();
    await b.stop();
  });

  it("runs every job to Completed, whichever orchestrator its nodes' execution reports reach", async () => {
    const a = await orchestrator("orch-g");
    const b = await orchestrator("orch-h");
    const kv = await nats.nc.jetstream().views.kv(LEASE_BUCKET);
    await waitFor(async () => (await owners(kv)).filter((o) => o === "orch-h").length === 2, 15_000);
    // Nodes that run their work at once: a bid accepted and a completion come back as reports in quick succession.
    const nodes = ["r-1", "r-2", "r-3"];
    const runners = nodes.map((id) =>
      agent(id, {
        labels: { runs: "sim" },
        executor: new SimExecutor(id, { cpuMillis: 4000, memoryBytes: 4 * 1024 ** 3 }, 0),
      }),
    );
    await Promise.all(runners.map((r) => r.start()));
    const jobIds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const via = i % 2 === 0 ? a : b;
      const api = jobApi(via);
      const submitted = await api.call("PUT", "/api/v1/orchestrator/jobs", {
        // Not on the earlier tests' nodes, which run nothing.
        Job: shellJob("busybox", "true", { constraints: [{ Key: "runs", Operator: "=", Values: ["sim"] }] }),
      });
      expect(submitted.status).toBe(200);
      jobIds.push(submitted.body.JobID as string);
    }
    // Without one orchestrator taking every report, the reports taken by the other left jobs Pending or Running.
    const completed = async (id: string) =>
      (await store.readStream(jobStream(id))).some((e) => e.type === "JobCompleted");
    await waitFor(async () => (await Promise.all(jobIds.map(completed))).every(Boolean), 20_000);
    // /metrics: each projects every job (the same figures on both); only the one running the job workflows placed any.
    const scrape = async (o: RunningOrchestrator) => {
      const res = await fetch(`${o.apiUrl}/metrics`, { headers: { authorization: `Bearer ${adminKeyOf(o)}` } });
      return metricSamples(await res.text());
    };
    const done = 'shoal_jobs{type="batch",state="Completed"}';
    await waitFor(async () => {
      const [fa, fb] = await Promise.all([scrape(a), scrape(b)]);
      return (fa.get(done) ?? 0) >= jobIds.length && fa.get(done) === fb.get(done);
    }, 10_000);
    const placed = (await Promise.all([scrape(a), scrape(b)])).map(
      (f) => f.get('shoal_placements_total{type="batch"}') ?? NaN,
    );
    expect(Math.min(...placed)).toBe(0);
    expect(Math.max(...placed)).toBeGreaterThanOrEqual(jobIds.length);
    await a.stop();
    await b.stop();
  });

  it("stops a running job through the orchestrator that does not run the job workflows: its execution is cancelled", async () => {
    const a = await orchestrator("orch-i");
    const b = await orchestrator("orch-j");
    const kv = await nats.nc.jetstream().views.kv(LEASE_BUCKET);
    await waitFor(async () => (await owners(kv)).filter((o) => o === "orch-j").length === 2, 15_000);
    const holderOf = async () => new TextDecoder().decode((await kv.get("duties.jobs"))?.value).split("/")[0];
    await waitFor(async () => (await holderOf()) !== "", 5_000);
    const [holder, other] = (await holderOf()) === "orch-i" ? [a, b] : [b, a];
    const runner = agent("s-1", {
      labels: { runs: "long" },
      executor: new SimExecutor("s-1", { cpuMillis: 4000, memoryBytes: 4 * 1024 ** 3 }, 60_000),
    });
    await runner.start();
    const submitted = await jobApi(holder).call("PUT", "/api/v1/orchestrator/jobs", {
      Job: shellJob("busybox", "sleep 60", { constraints: [{ Key: "runs", Operator: "=", Values: ["long"] }] }),
    });
    const jobId = submitted.body.JobID as string;
    const types = async (stream: string) => (await store.readStream(stream)).map((e) => e.type);
    await waitFor(async () => (await types(jobStream(jobId))).includes("JobStarted"), 15_000);
    const executions = async () =>
      (await store.readAll()).filter(
        (e) => e.type === "ExecutionCreated" && (e.data as { JobID?: string }).JobID === jobId,
      );
    const [created] = await executions();
    await waitFor(async () => (await types(created?.stream ?? "")).includes("ExecutionStarted"), 15_000);

    // The holder's job actor last saw the job running; the stop is stored by the other orchestrator.
    expect((await jobApi(other).call("DELETE", `/api/v1/orchestrator/jobs/${jobId}`)).status).toBe(200);
    await waitFor(async () => (await types(created?.stream ?? "")).includes("ExecutionCancelled"), 15_000);
    expect((await types(jobStream(jobId))).filter((t) => t === "JobStopped")).toHaveLength(1);
    await a.stop();
    await b.stop();
  });

  it("has a REST write carried out by the entity's owner, for the REST user; the receiver reads what was written", async () => {
    const kv = await nats.nc.jetstream().views.kv(LEASE_BUCKET);
    // A lease kept by an orchestrator that answers nothing (as one that hangs would): its partition has no listener.
    const GHOST = 3;
    const ghostKey = `partitions.${GHOST}`;
    const ghost = new TextEncoder().encode("ghost/0");
    let ghostRevision = await kv.create(ghostKey, ghost);
    const keepGhost = setInterval(() => {
      kv.update(ghostKey, ghost, ghostRevision).then(
        (r) => (ghostRevision = r),
        () => undefined,
      );
    }, 2_000);
    try {
      const a = await orchestrator("orch-k", { "Orchestrator.NodeManager.ManualApproval": true });
      const b = await orchestrator("orch-l", { "Orchestrator.NodeManager.ManualApproval": true });
      await waitFor(async () => {
        const held = await owners(kv);
        return held.includes("orch-k") && held.includes("orch-l") && held.filter((o) => o !== "ghost").length === 3;
      }, 15_000);
      const held = await owners(kv);
      const inPartition = (prefix: string, wanted: (p: number) => boolean) => {
        for (let i = 0; ; i++) if (wanted(partitionOf(`${prefix}-${i}`, PARTITIONS))) return `${prefix}-${i}`;
      };
      const nodeId = inPartition("f", (p) => held[p] === "orch-k");
      const path = `/nodes/${nodeId}`;
      await agent(nodeId).start();
      await waitFor(async () => (await rest(b, "GET", path)).status === 200, 10_000);
      const pending = await rest(b, "GET", path);
      expect(pending.body.Node.Membership).toBe("PENDING");

      // B forwards to A, which owns the node: a stale If-Match is refused there, and the refusal comes back.
      const stale = await rest(b, "PUT", path, { Action: "approve" }, { "if-match": 'W/"99"' });
      expect(stale.status).toBe(412);
      expect(stale.body.Code).toBe("PreconditionFailed");
      const etag = pending.headers.get("etag") ?? "";
      const approved = await rest(b, "PUT", path, { Action: "approve", Message: "checked" }, { "if-match": etag });
      expect(approved.status).toBe(200);
      // Read-your-writes on the orchestrator that answered, though another one wrote it.
      const afterApproval = await rest(b, "GET", path);
      expect(afterApproval.body.Node.Membership).toBe("APPROVED");
      expect(afterApproval.headers.get("etag")).toBe(approved.headers.get("etag"));
      const cordoned = await rest(b, "PUT", path, { Action: "cordon", Message: "disk swap" });
      expect(cordoned.status).toBe(200);
      expect((await rest(b, "GET", path)).body.Node.Cordoned).toBe(true);
      const again = await rest(b, "PUT", path, { Action: "cordon" });
      expect(again.body).toEqual({ Success: true, Message: expect.stringContaining("cordoned") });

      // A wrote them, under its lease on the node's partition (B holds none), for the REST user with the reason given.
      const events = await store.readStream(`node-${nodeId}`);
      const approval = events.find((e) => e.type === "NodeApproved");
      expect(leaseOf(approval)?.partition).toBe(partitionOf(nodeId, PARTITIONS));
      expect(leaseOf(approval)?.epoch).toBeGreaterThan(0);
      expect(approval?.metadata).toMatchObject({ actor: { type: "operator", id: "admin" }, reason: "checked" });
      expect(events.filter((e) => e.type === "NodeCordoned").map((e) => e.metadata)).toEqual([
        expect.objectContaining({ actor: { type: "operator", id: "admin" }, reason: "disk swap" }),
      ]);

      // Nobody answers for the ghost's partition: 503 with a Retry-After, from either, and nothing is stored.
      const ghostNode = inPartition("g", (p) => p === GHOST);
      for (const via of [a, b]) {
        const refused = await rest(via, "PUT", `/nodes/${ghostNode}`, { Action: "preauthorize" });
        expect(refused.status).toBe(503);
        expect(refused.body.Code).toBe("Unavailable");
        expect(refused.headers.get("retry-after")).toBe("1");
      }
      expect(await store.readStream(`node-${ghostNode}`)).toEqual([]);

      // What reaches the owner is decoded strictly: a bad actor, unknown arguments, another partition's node are
      // refused BadRequest, and nothing is stored.
      const ask = async (message: unknown) => {
        const subject = partitionCommandsSubject(partitionOf(nodeId, PARTITIONS));
        return decodeForwardedAnswer((await nats.nc.request(subject, encode(message), { timeout: 5_000 })).data);
      };
      const uncordon = {
        Command: "update-node",
        Entity: nodeId,
        Args: { Action: "uncordon" },
        From: "orch-l",
        Actor: { Type: "operator", ID: "admin" },
        CorrelationID: "c-1",
        CausationID: "c-1",
      };
      const badRequest = { Refused: { Kind: "BadRequest" } };
      expect(await ask({ ...uncordon, Actor: "root" })).toMatchObject(badRequest);
      expect(await ask({ ...uncordon, Args: { Action: "explode" } })).toMatchObject(badRequest);
      expect(await ask({ ...uncordon, Entity: ghostNode })).toMatchObject(badRequest);
      expect(await store.readStream(`node-${nodeId}`)).toHaveLength(events.length);

      // A job stop goes to the jobs duty's holder; the other answers once its read model shows it Stopped.
      const holder = new TextDecoder().decode((await kv.get("duties.jobs"))?.value).split("/")[0];
      const other = holder === "orch-k" ? b : a;
      const submitted = await rest(other, "PUT", "/jobs", {
        // Queued until stopped: with no queue timeout it would fail at once, and a stop after that is refused.
        Job: shellJob("busybox", "true", {
          constraints: [{ Key: "zone", Operator: "=", Values: ["nowhere"] }],
          timeouts: { QueueTimeout: 600 },
        }),
      });
      const jobId = submitted.body.JobID as string;
      const stopped = await rest(other, "DELETE", `/jobs/${jobId}?reason=no+longer+needed`);
      expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
      expect((await rest(other, "GET", `/jobs/${jobId}`)).body.Job.State.StateType).toBe("Stopped");
      const stop = (await store.readStream(jobStream(jobId))).filter((e) => e.type === "JobStopped");
      expect(stop.map((e) => e.metadata)).toEqual([
        expect.objectContaining({ actor: { type: "operator", id: "admin" }, reason: "no longer needed" }),
      ]);
      await a.stop();
      await b.stop();
    } finally {
      clearInterval(keepGhost);
      await kv.delete(ghostKey).catch(() => undefined);
    }
  });
});
