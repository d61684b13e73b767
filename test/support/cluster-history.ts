import { encodeExecutionEvent } from "../../src/events/catalog/execution-event-codec.ts";
import { encodeJobEvent } from "../../src/events/catalog/job-event-codec.ts";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import type { EventStore, NewEvent } from "../../src/events/store/event-store.ts";
import { executionStream, jobStream, nodeStream } from "../../src/events/streams.ts";
import { exampleEvent } from "./example-events.ts";
import { seededRandom } from "./seeded-random.ts";

const NODE_TYPES = [
  "NodeApproved",
  "NodeRejected",
  "NodeInfoUpdated",
  "NodeBecameUnhealthy",
  "NodeBecameUnknown",
  "NodeBecameHealthy",
  "NodeCordoned",
  "NodeUncordoned",
  "NodeLabelsSet",
  "NodeDrainStarted",
  "NodeDrainCompleted",
  "NodeUndrained",
  "NodeDeleted",
] as const;
const JOB_TYPES = ["JobQueued", "JobStarted", "JobCompleted", "JobFailed", "JobStopped"] as const;
const EXECUTION_TYPES = [
  "ExecutionBidAsked",
  "ExecutionBidAccepted",
  "ExecutionStarted",
  "ExecutionCompleted",
  "ExecutionFailed",
] as const;
const START = Date.parse("2026-11-01T00:00:00Z");

/**
 * Appends a random cluster history of `count` valid events (each decodes with its kind's schema) through the store's
 * own append: nodes registering and changing, jobs submitted with executions on the nodes, a second apart in time with
 * some decided earlier than the event before them. Events the charts do not take in an entity's state are kept: the
 * folds leave the state as it is, as they do for any stored event.
 */
export async function writeClusterHistory(store: EventStore, count: number, seed: number): Promise<void> {
  const random = seededRandom(seed);
  const nodes: string[] = [];
  const jobs: string[] = [];
  const executions: { readonly id: string; readonly jobId: string }[] = [];
  for (let i = 0; i < count; i++) {
    const at = START + i * 1_000 - (random.next() < 0.05 ? random.int(5_000) : 0);
    const meta = {
      time: new Date(at).toISOString(),
      actor: random.next() < 0.1 ? { type: "operator" as const, id: "alice" } : { type: "system" as const, id: "test" },
      correlationId: `c-${i}`,
      causationId: `c-${i}`,
    };
    const id = `e-${seed}-${i}`;
    const r = random.next();
    let stream: string;
    let event: NewEvent;
    if (nodes.length < 3 || r < 0.1) {
      const nodeId = `n-${nodes.length}`;
      nodes.push(nodeId);
      stream = nodeStream(nodeId);
      const registered = exampleEvent("NodeRegistered", nodeId, {
        Membership: random.pick(["PENDING", "APPROVED"] as const),
      });
      event = encodeNodeEvent(registered as never, meta, id);
    } else if (r < 0.7) {
      const nodeId = random.pick(nodes);
      stream = nodeStream(nodeId);
      event = encodeNodeEvent(exampleEvent(random.pick(NODE_TYPES), nodeId) as never, meta, id);
    } else if (jobs.length === 0 || r < 0.78) {
      const jobId = `j-${seed}-${jobs.length}`;
      jobs.push(jobId);
      stream = jobStream(jobId);
      event = encodeJobEvent(exampleEvent("JobSubmitted", jobId) as never, meta, id);
    } else if (r < 0.86) {
      const jobId = random.pick(jobs);
      stream = jobStream(jobId);
      event = encodeJobEvent(exampleEvent(random.pick(JOB_TYPES), jobId) as never, meta, id);
    } else if (executions.length === 0 || r < 0.92) {
      const jobId = random.pick(jobs);
      const executionId = `x-${seed}-${executions.length}`;
      executions.push({ id: executionId, jobId });
      stream = executionStream(executionId);
      const created = exampleEvent("ExecutionCreated", executionId, { JobID: jobId, NodeID: random.pick(nodes) });
      event = encodeExecutionEvent(created as never, meta, id);
    } else {
      const execution = random.pick(executions);
      stream = executionStream(execution.id);
      event = encodeExecutionEvent(exampleEvent(random.pick(EXECUTION_TYPES), execution.id) as never, meta, id);
    }
    await store.append(stream, [event], "any");
  }
}
