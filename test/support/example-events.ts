import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { validateJobSubmission } from "../../src/actors/job-submission/validate-job-submission.ts";
import type { DomainEvent } from "../../src/projections/event-envelope.ts";
import { computeInfo } from "./fixtures.ts";

type Type = DomainEvent["type"];
type DataOf<T extends Type> = Extract<DomainEvent, { readonly type: T }>["data"];

const TIME = "2026-01-01T00:00:00.000Z";
const KEY = "UAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const BY = { type: "operator", id: "ops" } as const;
const OUTPUT = { Stdout: "", StdoutTruncated: false, stderr: "", StderrTruncated: false, ExitCode: 0, ErrorMsg: "" };

function specOf(jobId: string) {
  const input = { Type: "batch", Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } }] };
  const submission = validateJobSubmission(input, { jobId, defaults: BACALHAU_JOB_DEFAULTS });
  if (!submission.ok) throw new Error(`the example job spec is invalid: ${JSON.stringify(submission.problems)}`);
  return submission.spec;
}

/** Valid data of every entity event type, for the entity `id` (a node's, a job's or an execution's). */
const EXAMPLES: { readonly [T in Type]: (id: string) => DataOf<T> } = {
  NodeRegistered: (id) => ({
    NodeID: id,
    NodeType: "Compute",
    Info: computeInfo(id),
    Membership: "APPROVED",
    Lifecycle: 1,
  }),
  NodeApproved: (id) => ({ NodeID: id, Previous: "PENDING" }),
  NodeRejected: (id) => ({ NodeID: id, Previous: "APPROVED" }),
  NodeDeleted: (id) => ({ NodeID: id, Membership: "APPROVED" }),
  NodeInfoUpdated: (id) => ({ NodeID: id, Info: computeInfo(id), Changed: ["Labels"] }),
  NodeBecameUnhealthy: (id) => ({ NodeID: id, LastHeartbeat: TIME, DisconnectTimeoutMs: 60_000 }),
  NodeBecameUnknown: (id) => ({ NodeID: id, LastHeartbeat: null, UnknownTimeoutMs: 300_000 }),
  NodeBecameHealthy: (id) => ({ NodeID: id, Previous: "UNHEALTHY" }),
  NodeCredentialBound: (id) => ({ NodeID: id, PublicKey: KEY, Reinstated: false }),
  NodeCredentialRevoked: (id) => ({ NodeID: id, PublicKey: KEY, Reason: "deleted" }),
  NodeCordoned: (id) => ({ NodeID: id, Reason: "maintenance", By: BY }),
  NodeUncordoned: (id) => ({ NodeID: id, Reason: "done" }),
  NodeLabelsSet: (id) => ({ NodeID: id, Set: { role: "core" }, Removed: [], Reset: [] }),
  NodePreauthorized: (id) => ({ NodeID: id, Reason: "expected", By: BY }),
  NodePreauthorizationRevoked: (id) => ({ NodeID: id }),
  NodeDrainStarted: (id) => ({ NodeID: id, Deadline: TIME, KeepDaemon: false, Reason: "upgrade", By: BY }),
  NodeDrainCompleted: (id) => ({ NodeID: id, DaemonStopped: 0 }),
  NodeDrainDeadlineReached: (id) => ({ NodeID: id, Deadline: TIME, Left: [] }),
  NodeUndrained: (id) => ({ NodeID: id, Previous: "draining" }),
  JobSubmitted: (id) => ({ JobID: id, Job: specOf(id), Version: 1, Warnings: [] }),
  JobQueued: (id) => ({ JobID: id, Previous: "Pending", Reason: "no nodes" }),
  JobStarted: (id) => ({ JobID: id, Previous: "Pending" }),
  JobCompleted: (id) => ({ JobID: id, Previous: "Running" }),
  JobFailed: (id) => ({ JobID: id, Previous: "Running", Cause: "Scheduling", Message: "it failed" }),
  JobStopped: (id) => ({ JobID: id, Previous: "Running", Reason: "enough" }),
  JobUpdated: (id) => ({
    JobID: id,
    Previous: "Completed",
    Version: 2,
    Job: specOf(id),
    Diff: "- Count: 1\n+ Count: 2",
    Forced: false,
    Warnings: [],
  }),
  JobRerun: (id) => ({
    JobID: id,
    Previous: "Failed",
    Version: 3,
    FromVersion: 1,
    Job: specOf(id),
    Reason: "job rerun",
  }),
  JobUpdateHeld: (id) => ({
    JobID: id,
    Previous: "Running",
    Version: 2,
    Reason: "not enough nodes to run job. requested: 3, available: 3, suitable: 2.\n• Node n-3: node is cordoned",
  }),
  JobUpdateResumed: (id) => ({ JobID: id, Previous: "Running", Version: 2 }),
  ExecutionCreated: (id) => ({
    ExecutionID: id,
    JobID: "j-1",
    Namespace: "default",
    NodeID: "n-1",
    JobType: "batch",
    JobVersion: 1,
    PartitionIndex: 0,
    DesiredState: "Pending",
    AllocatedResources: { CPU: 0.1, Memory: 1024, Disk: 0, GPU: 0 },
    ExecutionTimeout: 60,
    TimeoutBuffer: 120,
    PreviousExecution: "",
  }),
  ExecutionBidAsked: (id) => ({ ExecutionID: id, NodeID: "n-1" }),
  ExecutionBidAccepted: (id) => ({ ExecutionID: id, NodeID: "n-1" }),
  ExecutionBidDeclined: (id) => ({ ExecutionID: id, NodeID: "n-1", Reason: "busy" }),
  ExecutionApproved: (id) => ({ ExecutionID: id }),
  ExecutionRejected: (id) => ({ ExecutionID: id, Reason: "not needed" }),
  ExecutionStarted: (id) => ({ ExecutionID: id }),
  ExecutionCompleted: (id) => ({ ExecutionID: id, RunOutput: OUTPUT }),
  ExecutionFailed: (id) => ({ ExecutionID: id, Previous: "Running", Cause: "Node", Message: "exit 1" }),
  ExecutionCancelled: (id) => ({ ExecutionID: id, Previous: "Running", Reason: "the job was stopped" }),
  ExecutionOutputKept: (id) => ({ ExecutionID: id, RunOutput: OUTPUT }),
};

/** An event of `type` about entity `id` with valid data (`data` replaces fields of it). */
export function exampleEvent<T extends Type>(type: T, id: string, data: Partial<DataOf<T>> = {}): DomainEvent {
  return { type, data: { ...EXAMPLES[type](id), ...data } } as unknown as DomainEvent;
}
