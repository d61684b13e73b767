import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { partitionOf } from "../../src/cluster/partition-of.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { entityIdOf } from "../../src/events/streams.ts";
import { SimExecutor } from "../../src/sim/sim-executor.ts";
import { virtualNodeCapacity, virtualNodeInfo } from "../../src/sim/virtual-node-info.ts";
import {
  epochsGoingBack,
  idsTwice,
  leaseOf,
  publishedSubjects,
  subjectsOf,
  transitionsTwice,
} from "../support/cluster-invariants.ts";
import { CLUSTER_JOIN_TOKEN, ShoalCluster, type ClusterOrchestrator } from "../support/shoal-cluster.ts";
import { waitFor } from "../support/shoal-process.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * Three orchestrators as separate `shoal serve` processes in cluster mode, on a NATS cluster of three servers and the
 * KurrentDB stand-in (its own process), with compute nodes heartbeating all along, through the faults a cluster must
 * ride out: an owner killed (-9), an owner paused past its lease (SIGSTOP, then SIGCONT), the nats-server leading the
 * lease bucket killed, and a rolling restart under job submissions. After each, the store must show no transition
 * twice, no partition's epochs going back, no node marked UNHEALTHY but those the test silenced; and at the end every
 * stored event is on SHOAL_EVENTS exactly once.
 */
const PARTITIONS = 6;
const LEASE_TTL_MS = 15_000;
const DISCONNECT_MS = 5_000;
const HEARTBEAT_MS = 500;
/** A partition whose owner died is served again within this long: its lease runs out, then the next tick takes it. */
const TAKE_OVER_MS = LEASE_TTL_MS + 5_000;

let cluster: ShoalCluster;
const agents = new Map<string, ComputeAgent>();
/** Nodes the test stopped: the only ones that may be marked UNHEALTHY. */
const silenced = new Set<string>();
/** Jobs an orchestrator acknowledged (200 to PUT /jobs). */
const submitted: string[] = [];

/** Two compute nodes in each partition, so that one can go silent while the other keeps heartbeating. */
function nodeIds(): string[] {
  const chosen: string[] = [];
  const per = new Map<number, number>();
  for (let i = 1; chosen.length < 2 * PARTITIONS; i++) {
    const id = `c-${i}`;
    const p = partitionOf(id, PARTITIONS);
    if ((per.get(p) ?? 0) >= 2) continue;
    per.set(p, (per.get(p) ?? 0) + 1);
    chosen.push(id);
  }
  return chosen;
}

beforeAll(async () => {
  cluster = await ShoalCluster.start({
    orchestrators: 3,
    partitions: PARTITIONS,
    settings: [
      `Orchestrator.Cluster.LeaseTTL=${LEASE_TTL_MS}ms`,
      `Orchestrator.NodeManager.DisconnectTimeout=${DISCONNECT_MS}ms`,
      "Orchestrator.NodeManager.UnknownTimeout=1h",
      "Orchestrator.NodeManager.MaxRegistrationsPerSecond=0",
    ],
  });
  await cluster.untilServedBy(["orch-1", "orch-2", "orch-3"], 30_000);
  await Promise.all(
    nodeIds().map(async (id, index) => {
      const agent = testAgent({
        nodeId: id,
        orchestrators: cluster.nats.urls,
        token: CLUSTER_JOIN_TOKEN,
        heartbeatMs: HEARTBEAT_MS,
        infoUpdateMs: 10_000,
        resourceUpdateMs: 2_000,
        nodeInfo: () => virtualNodeInfo(id, index),
        executor: new SimExecutor(id, virtualNodeCapacity(index), 300),
        executionsInMemory: true,
      });
      agents.set(id, agent);
      await agent.start();
    }),
  );
}, 90_000);

afterAll(async () => {
  if (process.env.SHOAL_SCENARIO_LOGS) await cluster?.saveLogs(process.env.SHOAL_SCENARIO_LOGS);
  await Promise.all([...agents.values()].map((a) => a.stop()));
  await cluster?.stop();
});

/** Stops a compute node's agent: from now on it is silent, and may be marked UNHEALTHY. */
async function silence(nodeId: string): Promise<void> {
  silenced.add(nodeId);
  await agents.get(nodeId)?.stop();
}

/** A node of the partition that still heartbeats. */
function heartbeatingIn(partition: number): string {
  const id = [...agents.keys()].find((n) => partitionOf(n, PARTITIONS) === partition && !silenced.has(n));
  if (id === undefined) throw new Error(`no heartbeating node left in partition ${partition}`);
  return id;
}

const unhealthyMarks = (events: readonly RecordedEvent[]) =>
  events.filter((e) => e.type === "NodeBecameUnhealthy" && e.stream.startsWith("node-c-"));

/** The first time the node was marked UNHEALTHY, once it is. */
async function markedUnhealthy(nodeId: string, timeoutMs: number): Promise<RecordedEvent> {
  let mark: RecordedEvent | undefined;
  await waitFor(
    async () => {
      mark = unhealthyMarks(await cluster.events()).find((e) => entityIdOf(e.stream) === nodeId);
      return mark !== undefined;
    },
    timeoutMs,
    () => `${nodeId} marked UNHEALTHY`,
  );
  return mark as RecordedEvent;
}

/** What must hold after every scenario, read from the store. */
async function expectNothingBroken(): Promise<RecordedEvent[]> {
  const events = await cluster.events();
  expect(transitionsTwice(events)).toEqual([]);
  expect(epochsGoingBack(events)).toEqual([]);
  expect(idsTwice(events)).toEqual([]);
  const blamed = unhealthyMarks(events).filter((e) => !silenced.has(entityIdOf(e.stream)));
  expect(blamed.map((e) => ({ at: e.time, node: entityIdOf(e.stream), data: e.data, meta: e.metadata }))).toEqual([]);
  return events;
}

/** A partition the orchestrator owns now that still has a heartbeating node. */
async function partitionOwnedBy(o: ClusterOrchestrator): Promise<number> {
  const owners = await cluster.owners();
  const p = owners.findIndex(
    (owner, partition) =>
      owner === o.nodeId &&
      [...agents.keys()].some((n) => partitionOf(n, PARTITIONS) === partition && !silenced.has(n)),
  );
  if (p === -1) throw new Error(`${o.nodeId} owns no partition with a heartbeating node: ${JSON.stringify(owners)}`);
  return p;
}

/** Its log's "lease dropped" records for the key from the `from`th record on, with why. */
const dropsOf = (o: ClusterOrchestrator, key: string, from: number) =>
  o
    .logs()
    .slice(from)
    .filter((r) => r.msg === "lease dropped" && r.lease === key);

describe("several orchestrators as processes", () => {
  it("serves a killed (-9) owner's partitions again within the lease TTL, blaming no live node", async () => {
    const victim = cluster.orchestrator("orch-1");
    const partition = await partitionOwnedBy(victim);
    const mine = (await cluster.owners()).flatMap((o, p) => (o === victim.nodeId ? [p] : []));
    // A node of its partition goes silent as it dies: only the partition's next owner can mark it.
    const quiet = heartbeatingIn(partition);
    const killedAt = Date.now();
    await Promise.all([victim.kill("SIGKILL"), silence(quiet)]);

    await waitFor(
      async () => {
        const owners = await cluster.owners();
        return mine.every((p) => owners[p] !== undefined && owners[p] !== victim.nodeId);
      },
      TAKE_OVER_MS,
      () => `partitions ${mine.join(", ")} taken from ${victim.nodeId}`,
    );
    const mark = await markedUnhealthy(quiet, TAKE_OVER_MS + DISCONNECT_MS - (Date.now() - killedAt));
    expect(leaseOf(mark)?.partition).toBe(partition);
    expect(Date.now() - killedAt).toBeLessThan(TAKE_OVER_MS + DISCONNECT_MS);

    await victim.start();
    await cluster.untilServedBy(["orch-1", "orch-2", "orch-3"], TAKE_OVER_MS);
    await expectNothingBroken();
  }, 90_000);

  it("an owner paused past its lease (SIGSTOP) writes nothing under it once continued", async () => {
    const victim = cluster.orchestrator("orch-2");
    const partition = await partitionOwnedBy(victim);
    const key = `partitions.${partition}`;
    const before = await cluster.lease(key);
    const quiet = heartbeatingIn(partition);
    const logged = victim.logs().length;
    // Its deadline for the silent node is due the moment it runs again: it must find its lease gone by then.
    victim.signal("SIGSTOP");
    try {
      await silence(quiet);
      await waitFor(
        async () => {
          const now = await cluster.lease(key);
          return now !== undefined && now.holder !== before?.holder;
        },
        TAKE_OVER_MS,
        () => `${key} taken from the paused ${victim.nodeId}`,
      );
      const mark = await markedUnhealthy(quiet, DISCONNECT_MS + 5_000);
      expect(leaseOf(mark)?.partition).toBe(partition);
      expect(leaseOf(mark)?.epoch).toBeGreaterThan(before?.revision ?? Number.POSITIVE_INFINITY);
    } finally {
      victim.signal("SIGCONT");
    }
    // It drops the lease as expired on its own clock, and then takes its share again.
    await waitFor(
      () => dropsOf(victim, key, logged).length > 0,
      10_000,
      () => `${victim.nodeId} dropping ${key}`,
    );
    expect(dropsOf(victim, key, logged).map((r) => r.why)).toEqual(["expired"]);
    await cluster.untilServedBy(["orch-1", "orch-2", "orch-3"], TAKE_OVER_MS);
    // Its timers have all run by now: nothing under its old epoch landed after the new owner's write.
    await sleep(2 * HEARTBEAT_MS);
    const events = await expectNothingBroken();
    const quietMarks = unhealthyMarks(events).filter((e) => entityIdOf(e.stream) === quiet);
    expect(quietMarks).toHaveLength(1);
  }, 90_000);

  it("keeps the leases when the nats-server leading their bucket dies (3 replicas), blaming no live node", async () => {
    const leader = await cluster.streamLeader("KV_SHOAL_LEASES");
    expect(leader).toBeDefined();
    const before = await cluster.partitionLeases();
    cluster.nats.kill(leader as string);
    try {
      // Renewals go on under a new stream leader: every lease is held by the same start, at a newer revision.
      await waitFor(
        async () => {
          const now = await cluster.partitionLeases().catch(() => []);
          return before.every((l, p) => now[p]?.holder === l?.holder && (now[p]?.revision ?? 0) > (l?.revision ?? 0));
        },
        LEASE_TTL_MS,
        () => "every lease renewed by its holder",
      );
      // Long enough for any node cut off by the dead server, and not back, to be marked.
      await sleep(DISCONNECT_MS + 2_000);
      const now = await cluster.partitionLeases();
      expect(now.map((l) => l?.holder)).toEqual(before.map((l) => l?.holder));
      await expectNothingBroken();
    } finally {
      cluster.nats.revive(leader as string);
    }
  }, 60_000);

  /**
   * Each restart is a SIGTERM, a new `shoal serve` and the partitions shared out again. On a loaded 2-core machine
   * (load average 15) that measured 15–22 s: the stop under 1 s, then 9–11 s from the old process's last log line to
   * the new one's first (Node exiting, starting and loading the CLI), start-up 3–6 s, the hand-offs the rest; 40–67 s
   * for all three. Two minutes left too little room on a machine busier than that, so the test has three; a restart
   * that stalls still fails on its own bounds (ready within a minute, served within TAKE_OVER_MS). A restarted
   * orchestrator that met a NATS cluster still electing its JetStream leaders (after the test above) used to exit at
   * once on the lease bucket's TIMEOUT, which the test saw only as no "is running" within a minute; it now tries again.
   */
  it("rides out a rolling restart (SIGTERM one, ready, the next) under heartbeats and job submissions", async () => {
    let restarting = "";
    let submitting = true;
    const submitter = (async () => {
      while (submitting) {
        const api = cluster.anyRunning(restarting).api;
        const res = await api
          .call("PUT", "/api/v1/orchestrator/jobs", { Job: batchJob(submitted.length) })
          .catch(() => undefined);
        // Refused or cut off by a stop: not acknowledged, so nothing is owed for it.
        if (res?.status === 200) submitted.push(res.body.JobID as string);
        await sleep(300);
      }
    })();
    try {
      for (const o of cluster.orchestrators) {
        restarting = o.nodeId;
        expect(await o.kill("SIGTERM")).toBe(0);
        await o.start();
        await cluster.untilServedBy(["orch-1", "orch-2", "orch-3"], TAKE_OVER_MS);
        restarting = "";
        await sleep(1_000);
      }
    } finally {
      submitting = false;
      await submitter;
    }
    expect(submitted.length).toBeGreaterThan(10);
    // Every job acknowledged is stored.
    const stories = jobStories(await expectNothingBroken());
    expect(submitted.filter((id) => stories.get(id)?.[0] !== "JobSubmitted")).toEqual([]);
  }, 180_000);

  it("runs every job acknowledged during the rolling restart to its end", async () => {
    let unfinished: string[] = [];
    await waitFor(
      async () => {
        const stories = jobStories(await cluster.events());
        unfinished = submitted
          .filter((id) => !stories.get(id)?.includes("JobCompleted"))
          .map((id) => `${id}: ${stories.get(id)?.join(" ")}`);
        return unfinished.length === 0;
      },
      15_000,
      () => `every job Completed; not: ${unfinished.join("; ")}`,
    );
  }, 30_000);

  it("has every stored event on SHOAL_EVENTS exactly once", async () => {
    const jsm = await cluster.nc.jetstreamManager();
    let expected: Record<string, number> = {};
    let published: Record<string, number> = {};
    const caughtUp = async () => {
      expected = subjectsOf(await cluster.events());
      published = await publishedSubjects(jsm);
      return JSON.stringify(sorted(expected)) === JSON.stringify(sorted(published));
    };
    await waitFor(caughtUp, 30_000, () => "SHOAL_EVENTS to hold what the store holds").catch(() => undefined);
    expect(Object.keys(expected).length).toBeGreaterThan(10);
    expect(sorted(published)).toEqual(sorted(expected));
  }, 60_000);
});

/** Each job's events in store order, its executions' among them (`x:` before their type). */
function jobStories(events: readonly RecordedEvent[]): Map<string, string[]> {
  const stories = new Map<string, string[]>();
  const jobOfExecution = new Map<string, string>();
  for (const e of events) {
    if (e.stream.startsWith("job-")) {
      const id = entityIdOf(e.stream);
      stories.set(id, [...(stories.get(id) ?? []), e.type]);
    } else if (e.stream.startsWith("execution-")) {
      if (e.type === "ExecutionCreated") jobOfExecution.set(e.stream, (e.data as { JobID: string }).JobID);
      const job = jobOfExecution.get(e.stream);
      if (job !== undefined) stories.set(job, [...(stories.get(job) ?? []), `x:${e.type}`]);
    }
  }
  return stories;
}

const sorted = (counts: Record<string, number>) =>
  Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));

/** A short batch job on one of the sim nodes. */
function batchJob(n: number) {
  return {
    Name: `rolling-${n}`,
    Type: "batch",
    Constraints: [{ Key: "sim", Operator: "=", Values: ["true"] }],
    Tasks: [
      {
        Name: "main",
        Engine: { Type: "docker", Params: { Image: "busybox:sim", Entrypoint: ["sh", "-c"], Parameters: ["echo hi"] } },
        Resources: { CPU: "100m", Memory: "16Mb" },
      },
    ],
  };
}
