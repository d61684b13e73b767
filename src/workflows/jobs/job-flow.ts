import { EXECUTION_CATEGORY, JOB_CATEGORY, NODE_CATEGORY, categoryOf, entityIdOf } from "../../events/streams.ts";
import type { Workflow, WorkflowCommand } from "../workflow.ts";

export const PLACEMENT = "job-placement";
export const DISPATCH = "execution-dispatch";
export const SETTLE = "job-settle";
export const CANCEL = "job-cancel";
export const APPROVAL = "execution-approval";

/**
 * Events after which a node may take work it could not before (NodeInfoUpdated: its labels,
 * engines or capacity changed, so it may match an ops or daemon job now). Not inputs of the recorded
 * workflow (a step per node event would be stored for nothing when no job waits): `isNodeGain`
 * lets the orchestrator place the Queued jobs again, and those placements are recorded on the jobs.
 */
const NODE_GAINS = new Set([
  "NodeRegistered",
  "NodeApproved",
  "NodeBecameHealthy",
  "NodeInfoUpdated",
  "NodeUncordoned",
  "NodeLabelsSet",
  "NodeUndrained",
]);
/** An execution's end: its job may be done, and its capacity is free again. */
const EXECUTION_ENDS = new Set([
  "ExecutionCompleted",
  "ExecutionFailed",
  "ExecutionCancelled",
  "ExecutionBidDeclined",
  "ExecutionRejected",
]);
/** A job's end that leaves executions to stop on their nodes. */
const JOB_ENDS = new Set(["JobStopped", "JobFailed"]);

/**
 * How a submitted job runs, as a process manager on the store: a job submitted is placed; a node
 * that can take more work, or an execution that ends, has the Queued jobs placed again; an
 * execution created is sent to its node; an execution that ends may end its job; a job stopped or
 * failed has its executions cancelled (a node that can take more work: see isNodeGain). Pure: the host records every
 * step before it acts.
 */
export const jobFlow: Workflow = {
  name: "jobs",
  react(input): WorkflowCommand[] {
    const { recorded } = input;
    const category = categoryOf(recorded.stream);
    const id = entityIdOf(recorded.stream);
    if (category === JOB_CATEGORY) {
      if (recorded.type === "JobSubmitted")
        return [{ handler: PLACEMENT, entityId: id, type: "PlaceJob", reason: "the job was submitted" }];
      if (JOB_ENDS.has(recorded.type))
        return [
          { handler: CANCEL, entityId: id, type: "CancelExecutions", reason: `the job ended (${recorded.type})` },
        ];
      return [];
    }
    if (category === EXECUTION_CATEGORY) {
      // Batch and service: ask for the node's bid, approve it, then run (Bacalhau v1.7); ops and daemon: a direct bid,
      // one message.
      const created = input.as("ExecutionCreated");
      if (created) {
        const asks = created.data.DesiredState === "Pending";
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
      const accepted = input.as("ExecutionBidAccepted");
      if (accepted) {
        return accepted.data.Direct === true
          ? []
          : [{ handler: APPROVAL, entityId: id, type: "ApproveBids", reason: "a node accepted the bid" }];
      }
      if (recorded.type === "ExecutionApproved")
        return [{ handler: DISPATCH, entityId: id, type: "RunExecution", reason: "the bid was approved" }];
      if (EXECUTION_ENDS.has(recorded.type)) {
        return [
          { handler: SETTLE, entityId: id, type: "SettleJob", reason: `an execution ended (${recorded.type})` },
          { handler: PLACEMENT, entityId: id, type: "PlaceQueuedJobs", reason: "an execution freed capacity" },
        ];
      }
      return [];
    }
    return [];
  },
};

export const isNodeGain = (stream: string, type: string): boolean =>
  categoryOf(stream) === NODE_CATEGORY && NODE_GAINS.has(type);
