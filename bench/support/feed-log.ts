import Database from "better-sqlite3";
import { actorColumns } from "../../src/events/sqlite/actor-columns.ts";
import { OP_APPEND, SqliteBatchWriter, type EncodedBatch } from "../../src/events/sqlite/sqlite-batch-writer.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { ExpectedRevision } from "../../src/events/store/event-store.ts";
import { virtualNodeInfo } from "../../src/sim/virtual-node-info.ts";
import { seededRandom } from "../../test/support/seeded-random.ts";

/** The cluster's history the feed bench reads: its size and what it names, for the filters to ask about. */
export interface FeedLog {
  readonly events: number;
  readonly nodes: number;
  readonly jobs: number;
  /** The node whose stream is the long one, and its length. */
  readonly longNode: string;
  readonly longStreamEvents: number;
  /** A job id (its execution has another id), for an entity filter over the three stream kinds. */
  readonly someJob: string;
  /** The node that ran someJob's execution: it acts on its own stream and on that execution's. */
  readonly someJobNode: string;
  readonly firstTime: number;
  readonly lastTime: number;
  /** Events per actor type, and per operator. */
  readonly byActorType: Readonly<Record<string, number>>;
  readonly byOperator: Readonly<Record<string, number>>;
  readonly byType: Readonly<Record<string, number>>;
}

/** The log spans two weeks from here, so "last week" and "the last six hours" are windows of it. */
const START = Date.parse("2026-11-01T00:00:00Z");
const SPAN_MS = 14 * 24 * 3_600_000;
/** Events per commit: a busy orchestrator's group commits hold hundreds to thousands. */
const COMMIT_EVENTS = 2_000;
const POOL = 64;

type Actor = readonly [type: string, id: string];
const NODE_MANAGER: Actor = ["system", "node-manager"];
const ALICE: Actor = ["operator", "alice"];
const BOB: Actor = ["operator", "bob"];
const CAROL: Actor = ["operator", "carol"];
const CI: Actor = ["operator", "ci-pipeline"];

interface Pending {
  readonly type: string;
  readonly data: unknown;
  readonly actor: Actor;
  readonly reason?: string;
}

interface Job {
  readonly id: string;
  readonly execution: string;
  readonly node: string;
  readonly submitter: Actor;
  /** The rest of its life, first event next. */
  readonly steps: (readonly [stream: string, event: Pending])[];
}

/**
 * Writes a cluster's history of `events` events into a new store file through the store's own
 * writer (SqliteBatchWriter.commit, group commits of ≈ 2,000 events, each append with its
 * expected revision), so every row carries what the writer keeps: actor columns, indexes, time
 * marks and the largest skew. Deterministic for a seed (positions, streams, types, actors, times).
 *
 * At 1,000,000 events: 100,000 nodes (events ÷ 10) register (NodeRegistered by the node, with its
 * info, and NodeCredentialBound, one append) and then change health (system:node-manager) and
 * report new info (the node) for the rest of the log; 20,000 jobs (events ÷ 50) live their batch
 * lives over a job and an execution stream (submitted by operator:ci-pipeline or, one in twenty,
 * operator:carol; placed and ended by workflow:jobs, or system:workflow-jobs, the name workflows
 * had before the workflow actor type, in the first half of the log; bids, starts and ends reported
 * by the node), 2 % failing and 1.5 % stopped by carol; before each event the jobs workflow causes,
 * it records its step (WorkflowStepRecorded in workflow-jobs, ≈ 8 % of the log), records the
 * default feed (node, job, execution) leaves out. alice cordons, uncordons, labels, drains and
 * deletes nodes, bob approves and rejects them: alice, bob and carol cause ≈ 1 % of the events.
 * One node's stream is long (events ÷ 20: a node flapping for months, cordoned by alice now and then).
 *
 * Times run over two weeks in store order with the skew a real store has: each event's time up to
 * 5 ms before its neighbours' (appends ordered by enqueue, not decide), and one in 2,000 stored
 * 100–900 ms late (a re-append after the store was unavailable).
 */
export function writeFeedLog(file: string, events: number, seed: number, log: (line: string) => void): FeedLog {
  const random = seededRandom(seed);
  const nodes = Math.max(10, Math.floor(events / 10));
  const jobs = Math.max(5, Math.floor(events / 50));
  const longStreamEvents = Math.max(50, Math.floor(events / 20));
  const per = (share: number) => Math.max(1, Math.round(events * share));
  const nodeId = (i: number) => `n-${String(i).padStart(6, "0")}`;
  const longNode = "n-flapping";

  const db = new Database(file);
  // The writer is what is exercised, not the disk: an fsync per commit would only slow the build.
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const writer = new SqliteBatchWriter(db, file);

  const revisions = new Map<string, number>();
  const byActorType: Record<string, number> = {};
  const byOperator: Record<string, number> = {};
  const byType: Record<string, number> = {};
  let written = 0;
  let firstTime = Infinity;
  let lastTime = -Infinity;
  let batch: EncodedBatch = [];
  let batchEvents = 0;
  let ids = 0;
  const idPrefix = (seed >>> 0).toString(16).padStart(8, "0");
  const uuid = () => `${idPrefix}-0000-4000-8000-${(ids++).toString(16).padStart(12, "0")}`;

  const commit = () => {
    if (batchEvents === 0) return;
    const result = writer.commit(batch);
    if (result.failure !== undefined)
      throw new Error(`the feed log's commit failed: ${JSON.stringify(result.failure)}`);
    if (result.refusals.length > 0)
      throw new Error(`the feed log's commit refused writes: ${JSON.stringify(result.refusals.slice(0, 4))}`);
    batch = [];
    batchEvents = 0;
  };

  /** One append to a stream, with its expected revision; times are taken here, in store order, with their skew. */
  const append = (stream: string, pending: readonly Pending[]) => {
    const current = revisions.get(stream) ?? -1;
    const expected: ExpectedRevision = current === -1 ? "no_stream" : current;
    batch.push(OP_APPEND, stream, expected, pending.length);
    const base = START + Math.floor((written * SPAN_MS) / events);
    const late = random.int(2_000) === 0 ? 100 + random.int(800) : random.int(6);
    const time = new Date(base - late).toISOString();
    const ms = base - late;
    if (ms < firstTime) firstTime = ms;
    if (ms > lastTime) lastTime = ms;
    for (const e of pending) {
      const correlation = uuid();
      const metadata = {
        time,
        actor: { type: e.actor[0], id: e.actor[1] },
        ...(e.reason === undefined ? {} : { reason: e.reason }),
        correlationId: correlation,
        causationId: correlation,
        schemaVersion: 1,
      };
      const json = JSON.stringify(metadata);
      // The actor columns as SqliteEventStore.append fills them, so the filter indexes hold what a live store's do.
      const [actorType, actorId] = actorColumns(metadata, json);
      batch.push(uuid(), e.type, JSON.stringify(e.data), json, time, 1, actorType, actorId);
      byActorType[e.actor[0]] = (byActorType[e.actor[0]] ?? 0) + 1;
      if (e.actor[0] === "operator") byOperator[e.actor[1]] = (byOperator[e.actor[1]] ?? 0) + 1;
      byType[e.type] = (byType[e.type] ?? 0) + 1;
    }
    revisions.set(stream, current + pending.length);
    written += pending.length;
    batchEvents += pending.length;
    if (batchEvents >= COMMIT_EVENTS) commit();
  };

  // Per node: 0 healthy, 1 unknown, 2 unhealthy.
  const health = new Uint8Array(nodes);
  let registered = 0;
  const register = (id: string, index: number) =>
    append(`node-${id}`, [
      {
        type: "NodeRegistered",
        data: {
          NodeID: id,
          NodeType: "Compute",
          Info: virtualNodeInfo(id, index),
          Membership: "APPROVED",
          Lifecycle: 1,
        },
        actor: ["node", id],
      },
      {
        type: "NodeCredentialBound",
        data: { NodeID: id, PublicKey: `U${id}`, Reinstated: false },
        actor: NODE_MANAGER,
      },
    ]);
  /** A node registered so far (never the long stream's: it has its own share). */
  const anyNode = () => random.int(registered);

  const healthChange = (i: number): Pending => {
    const id = nodeId(i);
    const was = health[i] as number;
    const at = new Date(START).toISOString();
    if (was === 0) {
      health[i] = 1;
      return {
        type: "NodeBecameUnknown",
        data: { NodeID: id, LastHeartbeat: at, UnknownTimeoutMs: 30_000 },
        actor: NODE_MANAGER,
      };
    }
    if (was === 1 && random.next() < 0.3) {
      health[i] = 2;
      return {
        type: "NodeBecameUnhealthy",
        data: { NodeID: id, LastHeartbeat: at, DisconnectTimeoutMs: 60_000 },
        actor: NODE_MANAGER,
        reason: "no heartbeat for 60s",
      };
    }
    health[i] = 0;
    return {
      type: "NodeBecameHealthy",
      data: { NodeID: id, Previous: was === 1 ? "UNKNOWN" : "UNHEALTHY" },
      actor: NODE_MANAGER,
    };
  };

  let longHealth = 0;
  let longWritten = 0;
  const longStep = (): Pending => {
    const n = longWritten++;
    // alice cordons the flapping node every 5,000 of its events, and lifts it 100 events later.
    if (n % 5_000 === 2_500)
      return {
        type: "NodeCordoned",
        data: { NodeID: longNode, Reason: "flapping", By: { type: "operator", id: "alice" } },
        actor: ALICE,
        reason: "flapping",
      };
    if (n % 5_000 === 2_600) return { type: "NodeUncordoned", data: { NodeID: longNode, Reason: "" }, actor: ALICE };
    longHealth = longHealth === 0 ? 1 : 0;
    return longHealth === 1
      ? {
          type: "NodeBecameUnknown",
          data: { NodeID: longNode, LastHeartbeat: "", UnknownTimeoutMs: 30_000 },
          actor: NODE_MANAGER,
        }
      : { type: "NodeBecameHealthy", data: { NodeID: longNode, Previous: "UNKNOWN" }, actor: NODE_MANAGER };
  };

  /** A step of the jobs workflow: the event it reacted to and the command it sent. */
  const workflowStep = (stream: string, event: Pending, execution: string): Pending => {
    const entity = stream.startsWith("execution-") ? execution : stream.slice("job-".length);
    return {
      type: "WorkflowStepRecorded",
      data: {
        Workflow: "jobs",
        Input: { EventID: uuid(), Stream: stream, Type: "JobSubmitted", Position: written },
        Commands: [{ CommandID: uuid(), Handler: "job", EntityID: entity, Type: event.type, Reason: "" }],
      },
      actor: event.actor,
    };
  };

  const pool: Job[] = [];
  let jobsStarted = 0;
  const newJob = (): Job => {
    const id = `j-${uuid()}`;
    const execution = `e-${uuid()}`;
    const node = nodeId(anyNode());
    const submitter = random.int(20) === 0 ? CAROL : CI;
    // Workflows were system actors before the workflow actor type: the first half of the log names them so.
    const workflow: Actor = written < events / 2 ? ["system", "workflow-jobs"] : ["workflow", "jobs"];
    const onNode: Actor = ["node", node];
    const job = `job-${id}`;
    const exec = `execution-${execution}`;
    const steps: (readonly [string, Pending])[] = [];
    if (random.int(33) === 0)
      steps.push([job, { type: "JobQueued", data: { JobID: id, Reason: "no node fits" }, actor: workflow }]);
    steps.push(
      [
        exec,
        {
          type: "ExecutionCreated",
          data: { ExecutionID: execution, JobID: id, Namespace: "default", NodeID: node, JobType: "batch" },
          actor: workflow,
        },
      ],
      [job, { type: "JobStarted", data: { JobID: id }, actor: workflow }],
      [exec, { type: "ExecutionBidAccepted", data: { ExecutionID: execution, NodeID: node }, actor: onNode }],
      [exec, { type: "ExecutionApproved", data: { ExecutionID: execution }, actor: workflow }],
      [exec, { type: "ExecutionStarted", data: { ExecutionID: execution }, actor: onNode }],
    );
    const fate = random.next();
    if (fate < 0.02)
      steps.push(
        [
          exec,
          {
            type: "ExecutionFailed",
            data: { ExecutionID: execution, Previous: "Running", Cause: "exit", Message: "exit code 1" },
            actor: onNode,
            reason: "exit code 1",
          },
        ],
        [job, { type: "JobFailed", data: { JobID: id, Cause: "executions", Message: "exit code 1" }, actor: workflow }],
      );
    else if (fate < 0.035)
      steps.push(
        [job, { type: "JobStopped", data: { JobID: id, Reason: "not needed" }, actor: CAROL, reason: "not needed" }],
        [
          exec,
          { type: "ExecutionCancelled", data: { ExecutionID: execution, Reason: "job stopped" }, actor: workflow },
        ],
      );
    else
      steps.push(
        [
          exec,
          { type: "ExecutionCompleted", data: { ExecutionID: execution, RunOutput: { ExitCode: 0 } }, actor: onNode },
        ],
        [job, { type: "JobCompleted", data: { JobID: id }, actor: workflow }],
      );
    append(job, [
      {
        type: "JobSubmitted",
        data: {
          JobID: id,
          Job: {
            ID: id,
            Name: `batch-${jobsStarted}`,
            Namespace: "default",
            Type: "batch",
            Count: 1,
            Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox:1", Entrypoint: ["echo"] } } }],
          },
          Version: 1,
          Warnings: [],
        },
        actor: submitter,
      },
    ]);
    jobsStarted++;
    return { id, execution, node, submitter, steps };
  };
  let someJob = "";
  let someJobNode = "";

  /** Each kind of event with the events it has left; drawn in proportion to them, so each is spread over the log. */
  const budgets = {
    registrations: nodes * 2,
    long: longStreamEvents,
    // 8.05 events a job in its streams, and 4.03 steps the jobs workflow records for the ones it causes.
    jobs: Math.round(jobs * 12.08),
    approvals: per(0.005),
    rejections: per(0.00005),
    cordons: per(0.001),
    uncordons: per(0.0008),
    labels: per(0.002),
    drains: per(0.0001) * 2,
    deletions: per(0.0002) * 2,
    info: per(0.05),
    health: 0,
  };
  type Kind = keyof typeof budgets;
  budgets.health = Math.max(0, events - Object.values(budgets).reduce((a, b) => a + b, 0));
  const kinds = Object.keys(budgets) as Kind[];

  const started = performance.now();
  let nextProgress = 100_000;
  register(longNode, nodes);
  while (written < events) {
    let total = 0;
    for (const k of kinds) total += Math.max(0, budgets[k]);
    let kind: Kind = "health";
    if (registered === 0) kind = "registrations";
    else if (total > 0) {
      let r = random.next() * total;
      for (const k of kinds) {
        r -= Math.max(0, budgets[k]);
        if (r < 0) {
          kind = k;
          break;
        }
      }
    }
    const before = written;
    const node = () => nodeId(anyNode());
    switch (kind) {
      case "registrations":
        if (registered < nodes) {
          register(nodeId(registered), registered);
          registered++;
        } else budgets.registrations = 0;
        break;
      case "long":
        append(`node-${longNode}`, [longStep()]);
        break;
      case "jobs": {
        if (pool.length === 0 || (pool.length < POOL && jobsStarted < jobs && random.int(8) === 0)) {
          if (jobsStarted < jobs) {
            const job = newJob();
            if (someJob === "" && written > events / 3) [someJob, someJobNode] = [job.id, job.node];
            pool.push(job);
          } else budgets.jobs = 0;
          break;
        }
        const at = random.int(pool.length);
        const job = pool[at] as Job;
        const step = job.steps.shift();
        if (step !== undefined) {
          const [stream, event] = step;
          // The jobs workflow records its step (the input and the command) in its own stream before it acts.
          if (event.actor[0] === "workflow" || event.actor[1] === "workflow-jobs")
            append("workflow-jobs", [workflowStep(stream, event, job.execution)]);
          append(stream, [event]);
        }
        if (job.steps.length === 0) pool.splice(at, 1);
        break;
      }
      case "approvals": {
        const id = node();
        append(`node-${id}`, [{ type: "NodeApproved", data: { NodeID: id, Previous: "PENDING" }, actor: BOB }]);
        break;
      }
      case "rejections": {
        const id = node();
        append(`node-${id}`, [
          { type: "NodeRejected", data: { NodeID: id, Previous: "PENDING" }, actor: BOB, reason: "unknown machine" },
        ]);
        break;
      }
      case "cordons": {
        const id = node();
        const reason = "kernel upgrade";
        append(`node-${id}`, [
          {
            type: "NodeCordoned",
            data: { NodeID: id, Reason: reason, By: { type: "operator", id: "alice" } },
            actor: ALICE,
            reason,
          },
        ]);
        break;
      }
      case "uncordons": {
        const id = node();
        append(`node-${id}`, [{ type: "NodeUncordoned", data: { NodeID: id, Reason: "" }, actor: ALICE }]);
        break;
      }
      case "labels": {
        const id = node();
        append(`node-${id}`, [
          {
            type: "NodeLabelsSet",
            data: { NodeID: id, Labels: { team: `t${random.int(12)}` }, Previous: {} },
            actor: ALICE,
          },
        ]);
        break;
      }
      case "drains": {
        const id = node();
        append(`node-${id}`, [
          { type: "NodeDrainStarted", data: { NodeID: id, DeadlineMs: 600_000 }, actor: ALICE, reason: "retiring" },
        ]);
        append(`node-${id}`, [
          random.int(10) === 0
            ? {
                type: "NodeDrainDeadlineReached",
                data: { NodeID: id, Leftover: [] },
                actor: ["workflow", "node-drain"],
              }
            : { type: "NodeDrainCompleted", data: { NodeID: id }, actor: ["workflow", "node-drain"] },
        ]);
        break;
      }
      case "deletions": {
        const id = node();
        append(`node-${id}`, [
          { type: "NodeDeleted", data: { NodeID: id, Membership: "APPROVED" }, actor: ALICE, reason: "retired" },
          { type: "NodeCredentialRevoked", data: { NodeID: id, Reason: "deleted" }, actor: NODE_MANAGER },
        ]);
        break;
      }
      case "info": {
        const i = anyNode();
        const id = nodeId(i);
        append(`node-${id}`, [
          {
            type: "NodeInfoUpdated",
            data: { NodeID: id, Info: virtualNodeInfo(id, i + written), Changed: ["ComputeNodeInfo"] },
            actor: ["node", id],
          },
        ]);
        break;
      }
      case "health": {
        const i = anyNode();
        append(`node-${nodeId(i)}`, [healthChange(i)]);
        break;
      }
    }
    budgets[kind] -= written - before;
    if (written >= nextProgress) {
      log(
        `  feed log: ${written.toLocaleString("en")} of ${events.toLocaleString("en")} events written (${((performance.now() - started) / 1000).toFixed(1)} s)`,
      );
      nextProgress += 100_000;
    }
  }
  commit();
  db.close();
  return {
    events: written,
    nodes: registered,
    jobs: jobsStarted,
    longNode,
    longStreamEvents: longWritten,
    someJob,
    someJobNode,
    firstTime,
    lastTime,
    byActorType,
    byOperator,
    byType,
  };
}

/** A new store file with the feed log in it: the schema made by the store, the rows by its writer. */
export async function buildFeedStore(
  file: string,
  events: number,
  seed: number,
  log: (line: string) => void,
): Promise<FeedLog> {
  await new SqliteEventStore(file).close();
  return writeFeedLog(file, events, seed, log);
}
