import Database from "better-sqlite3";
import { encodeExecutionEvent } from "../../src/events/catalog/execution-event-codec.ts";
import { encodeJobEvent } from "../../src/events/catalog/job-event-codec.ts";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import { actorColumns } from "../../src/events/sqlite/actor-columns.ts";
import { OP_APPEND, SqliteBatchWriter, type EncodedBatch } from "../../src/events/sqlite/sqlite-batch-writer.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import type { ExpectedRevision, NewEvent } from "../../src/events/store/event-store.ts";
import { virtualNodeInfo } from "../../src/sim/virtual-node-info.ts";
import { exampleEvent } from "../../test/support/example-events.ts";
import { seededRandom } from "../../test/support/seeded-random.ts";

/** The history the as-of bench folds: its size and span. */
export interface AsOfLog {
  readonly events: number;
  readonly nodes: number;
  readonly jobs: number;
  readonly firstTime: number;
  readonly lastTime: number;
}

const START = Date.parse("2026-11-01T00:00:00Z");
const SPAN_MS = 14 * 24 * 3_600_000;
const COMMIT_EVENTS = 2_000;
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

type Actor = { readonly type: "operator" | "node" | "system"; readonly id: string };
const MANAGER: Actor = { type: "system", id: "node-manager" };
const JOBS: Actor = { type: "system", id: "workflow-jobs" };
const OPERATORS: readonly Actor[] = [
  { type: "operator", id: "alice" },
  { type: "operator", id: "bob" },
];

/** A node's NATS user key as the schema takes it: U and 55 base32 characters, distinct per node. */
function nodeKey(index: number): string {
  let digits = "";
  for (let n = index; digits.length < 55; n = Math.floor(n / 32)) digits = BASE32[n % 32] + digits;
  return `U${digits}`;
}

/**
 * Writes a cluster's history of `events` events into a new store file through the store's own writer
 * (SqliteBatchWriter.commit, group commits of ≈ 2,000 events, each append with its expected revision). Every event
 * decodes with its kind's schema, so the read models fold it as a live store's: `events ÷ 10` nodes register (half
 * PENDING until bob approves them) with their keys, then change health (system:node-manager, HEALTHY ⇄ UNHEALTHY),
 * report new info now and then, and alice and bob cordon, uncordon and label them; `events ÷ 50` jobs are submitted
 * and run an execution on a node to its end. Times span two weeks in store order, a few milliseconds of skew apart.
 */
export async function buildAsOfStore(
  file: string,
  events: number,
  seed: number,
  log: (line: string) => void,
): Promise<AsOfLog> {
  await new SqliteEventStore(file).close();
  const random = seededRandom(seed);
  const nodes = Math.max(10, Math.floor(events / 10));
  const jobs = Math.max(5, Math.floor(events / 50));
  const nodeId = (i: number) => `n-${String(i).padStart(6, "0")}`;
  const db = new Database(file);
  // The fold is what is measured, not the disk: an fsync per commit would only slow the build.
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const writer = new SqliteBatchWriter(db, file);
  const revisions = new Map<string, number>();
  let batch: EncodedBatch = [];
  let batchEvents = 0;
  let written = 0;
  let ids = 0;
  let firstTime = Number.POSITIVE_INFINITY;
  let lastTime = Number.NEGATIVE_INFINITY;
  const idPrefix = (seed >>> 0).toString(16).padStart(8, "0");
  const uuid = () => `${idPrefix}-0000-4000-8000-${(ids++).toString(16).padStart(12, "0")}`;

  const commit = () => {
    if (batchEvents === 0) return;
    const result = writer.commit(batch);
    if (result.failure !== undefined)
      throw new Error(`the as-of log's commit failed: ${JSON.stringify(result.failure)}`);
    if (result.refusals.length > 0)
      throw new Error(`the as-of log's commit refused writes: ${JSON.stringify(result.refusals.slice(0, 4))}`);
    batch = [];
    batchEvents = 0;
  };

  type Encode = (
    meta: { time: string; actor: Actor; correlationId: string; causationId: string },
    id: string,
  ) => NewEvent;
  const append = (stream: string, actor: Actor, encoders: readonly Encode[]) => {
    const current = revisions.get(stream) ?? -1;
    const expected: ExpectedRevision = current === -1 ? "no_stream" : current;
    batch.push(OP_APPEND, stream, expected, encoders.length);
    const ms = START + Math.floor((written * SPAN_MS) / events) - random.int(6);
    const time = new Date(ms).toISOString();
    firstTime = Math.min(firstTime, ms);
    lastTime = Math.max(lastTime, ms);
    for (const encode of encoders) {
      const correlationId = uuid();
      const event = encode({ time, actor, correlationId, causationId: correlationId }, uuid());
      const json = JSON.stringify(event.metadata);
      const [actorType, actorId] = actorColumns(event.metadata, json);
      batch.push(event.id, event.type, JSON.stringify(event.data), json, time, 1, actorType, actorId);
    }
    revisions.set(stream, current + encoders.length);
    written += encoders.length;
    batchEvents += encoders.length;
    if (batchEvents >= COMMIT_EVENTS) commit();
  };
  const node =
    (type: Parameters<typeof exampleEvent>[0], id: string, data: Record<string, unknown> = {}): Encode =>
    (meta, eventId) =>
      encodeNodeEvent(exampleEvent(type, id, data as never) as never, meta, eventId);

  const pending = new Uint8Array(nodes);
  const unhealthy = new Uint8Array(nodes);
  const cordoned = new Uint8Array(nodes);
  let registered = 0;
  let submitted = 0;
  const jobEvery = Math.max(1, Math.floor(events / jobs));
  const started = performance.now();
  let nextProgress = 100_000;
  while (written < events) {
    const r = random.next();
    // The fleet joins over the first fifth of the log, then lives.
    if (registered < nodes && (registered === 0 || r < 0.5 || written > events / 5)) {
      const i = registered++;
      const id = nodeId(i);
      pending[i] = i % 2;
      append(`node-${id}`, { type: "node", id }, [
        node("NodeRegistered", id, { Info: virtualNodeInfo(id, i), Membership: i % 2 ? "PENDING" : "APPROVED" }),
        node("NodeCredentialBound", id, { PublicKey: nodeKey(i) }),
      ]);
    } else if (submitted < jobs && written % jobEvery < 6) {
      const jobId = `j-${idPrefix}-${String(submitted++).padStart(8, "0")}`;
      const executionId = `e-${jobId.slice(2)}`;
      const on = nodeId(random.int(registered));
      const submitter = OPERATORS[random.int(2)] as Actor;
      append(`job-${jobId}`, submitter, [(m, e) => encodeJobEvent(exampleEvent("JobSubmitted", jobId) as never, m, e)]);
      const execution =
        (type: Parameters<typeof exampleEvent>[0], data: Record<string, unknown> = {}): Encode =>
        (m, e) =>
          encodeExecutionEvent(exampleEvent(type, executionId, data as never) as never, m, e);
      append(`execution-${executionId}`, JOBS, [execution("ExecutionCreated", { JobID: jobId, NodeID: on })]);
      append(`job-${jobId}`, JOBS, [(m, e) => encodeJobEvent(exampleEvent("JobStarted", jobId) as never, m, e)]);
      append(`execution-${executionId}`, { type: "node", id: on }, [
        execution("ExecutionBidAccepted", { NodeID: on }),
        execution("ExecutionStarted"),
        execution("ExecutionCompleted"),
      ]);
      append(`job-${jobId}`, JOBS, [(m, e) => encodeJobEvent(exampleEvent("JobCompleted", jobId) as never, m, e)]);
    } else {
      const i = random.int(registered);
      const id = nodeId(i);
      const operator = OPERATORS[random.int(2)] as Actor;
      if (pending[i] === 1 && r < 0.05) {
        pending[i] = 0;
        append(`node-${id}`, OPERATORS[1] as Actor, [node("NodeApproved", id)]);
      } else if (r < 0.01) {
        cordoned[i] = cordoned[i] === 1 ? 0 : 1;
        append(`node-${id}`, operator, [node(cordoned[i] ? "NodeCordoned" : "NodeUncordoned", id)]);
      } else if (r < 0.02) {
        append(`node-${id}`, operator, [node("NodeLabelsSet", id, { Set: { team: `t${random.int(12)}` } })]);
      } else if (r < 0.07) {
        append(`node-${id}`, { type: "node", id }, [
          node("NodeInfoUpdated", id, { Info: virtualNodeInfo(id, i + written), Changed: ["ComputeNodeInfo"] }),
        ]);
      } else {
        unhealthy[i] = unhealthy[i] === 1 ? 0 : 1;
        append(`node-${id}`, MANAGER, [
          unhealthy[i]
            ? node("NodeBecameUnhealthy", id, { LastHeartbeat: new Date(START + written).toISOString() })
            : node("NodeBecameHealthy", id),
        ]);
      }
    }
    if (written >= nextProgress) {
      log(
        `  as-of log: ${written.toLocaleString("en")} of ${events.toLocaleString("en")} events written (${((performance.now() - started) / 1000).toFixed(1)} s)`,
      );
      nextProgress += 100_000;
    }
  }
  commit();
  db.close();
  return { events: written, nodes: registered, jobs: submitted, firstTime, lastTime };
}
