import type { NodeEventType } from "../../events/catalog/node-events.ts";
import { NODE_CATEGORY, categoryOf } from "../../events/streams.ts";
import type { Workflow, WorkflowCommand } from "../workflow.ts";
import { workflowActor } from "../workflow-actor.ts";

export const PLACEMENT = "job-placement";
export const DISPATCH = "execution-dispatch";
export const SETTLE = "job-settle";
export const CANCEL = "job-cancel";
export const APPROVAL = "execution-approval";
export const JOBS = "jobs";
/** The actor of the jobs workflow's actions, and of a placement no other workflow asked for. */
export const JOBS_ACTOR = workflowActor(JOBS);

/**
 * Events after which a node may take work it could not before (NodeInfoUpdated: its labels,
 * engines or capacity changed, so it may match an ops or daemon job now). Not inputs of the recorded
 * workflow (a step per node event would be stored for nothing when no job waits): `isNodeGain`
 * lets the orchestrator place the Queued jobs again, and those placements are recorded on the jobs.
 */
const NODE_GAINS: ReadonlySet<string> = new Set<NodeEventType>([
  "NodeRegistered",
  "NodeApproved",
  "NodeBecameHealthy",
  "NodeInfoUpdated",
  "NodeUncordoned",
  "NodeLabelsSet",
  "NodeUndrained",
]);

/**
 * How a submitted job runs, as a process manager on the store: a job submitted is placed; a node
 * that can take more work, or an execution that ends, has the Queued jobs placed again; an
 * execution created is sent to its node; an execution that ends may end its job; a job stopped or
 * failed has its executions cancelled (a node that can take more work: see isNodeGain). Pure: the host records every
 * step before it acts.
 */
export const jobFlow: Workflow = {
  name: JOBS,
  react({ event, entityId: id }): WorkflowCommand[] {
    switch (event.type) {
      case "JobSubmitted":
        return [{ handler: PLACEMENT, entityId: id, type: "PlaceJob", reason: "the job was submitted" }];
      // A next version: its executions are placed, the older versions' stopped (evaluateJob's caller).
      case "JobUpdated":
      case "JobRerun":
        return [
          { handler: PLACEMENT, entityId: id, type: "PlaceJob", reason: `version ${event.data.Version} of the job` },
        ];
      // A job's end that leaves executions to stop on their nodes.
      case "JobStopped":
      case "JobFailed":
        return [{ handler: CANCEL, entityId: id, type: "CancelExecutions", reason: `the job ended (${event.type})` }];
      // Batch and service: ask for the node's bid, approve it, then run (Bacalhau v1.7); ops and daemon: a direct bid,
      // one message.
      case "ExecutionCreated": {
        const asks = event.data.DesiredState === "Pending";
        return [
          {
            handler: DISPATCH,
            entityId: id,
            type: asks ? "AskForBid" : "RunExecution",
            reason: "the execution was placed",
          },
        ];
      }
      // A direct bid (ops, daemon) is approved by being made: no step to record.
      case "ExecutionBidAccepted":
        return event.data.Direct === true
          ? []
          : [{ handler: APPROVAL, entityId: id, type: "ApproveBids", reason: "a node accepted the bid" }];
      case "ExecutionApproved":
        return [{ handler: DISPATCH, entityId: id, type: "RunExecution", reason: "the bid was approved" }];
      // An execution's end: its job may be done, and its capacity is free again.
      case "ExecutionCompleted":
      case "ExecutionFailed":
      case "ExecutionCancelled":
      case "ExecutionBidDeclined":
      case "ExecutionRejected":
        return [
          { handler: SETTLE, entityId: id, type: "SettleJob", reason: `an execution ended (${event.type})` },
          { handler: PLACEMENT, entityId: id, type: "PlaceQueuedJobs", reason: "an execution freed capacity" },
        ];
      default:
        return [];
    }
  },
};

export const isNodeGain = (stream: string, type: string): boolean =>
  categoryOf(stream) === NODE_CATEGORY && NODE_GAINS.has(type);
