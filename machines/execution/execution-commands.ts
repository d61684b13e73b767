import type { AllocatedResources, PublishedResult, RunOutput } from "../../src/events/catalog/execution-events.ts";
import type { JobType } from "../job/job-spec.ts";

/**
 * What may be asked of an execution. The execution's id is the entity's (the host assigns
 * `e-<uuid>`); time is the command's `meta.now`. Create, AskForBid, Approve, Reject, Cancel and
 * Fail come from the orchestrator (scheduler, workflows); AcceptBid, DeclineBid, Start, Complete,
 * Fail and KeepOutput from the node's messages; TimeOutExecution and TimeOutAnswer from the execution's own
 * deadlines.
 */
export type ExecutionCommand =
  | {
      readonly type: "Create";
      readonly jobId: string;
      readonly namespace: string;
      readonly nodeId: string;
      readonly jobType: JobType;
      readonly jobVersion: number;
      readonly partitionIndex: number;
      readonly resources: typeof AllocatedResources.Type;
      /** Seconds (Bacalhau's GetExecutionTimeout: ExecutionTimeout, else TotalTimeout); 0 for none. */
      readonly executionTimeout: number;
      /**
       * Seconds the orchestrator allows past it before failing the execution itself (Bacalhau's housekeeping buffer).
       */
      readonly timeoutBuffer: number;
      readonly previousExecution?: string;
      /** How long the node may leave the work it is sent unanswered, in ms (DEFAULT_ANSWER_TIMEOUT_MS if not given). */
      readonly answerTimeoutMs?: number;
    }
  | { readonly type: "AskForBid" }
  | { readonly type: "AcceptBid" }
  | { readonly type: "DeclineBid"; readonly reason: string }
  | { readonly type: "Approve" }
  | { readonly type: "Reject"; readonly reason: string }
  /** `details`: the limits the node runs it under, as it reported them. */
  | { readonly type: "Start"; readonly details?: Readonly<Record<string, string>> }
  | { readonly type: "Complete"; readonly output: RunOutput; readonly publishedResult?: PublishedResult }
  /**
   * `cause`: "Node" for the node's error report, "Orchestrator" for the orchestrator's own verdict
   * (its node is gone).
   */
  | {
      readonly type: "Fail";
      readonly reason: string;
      readonly cause: "Node" | "Orchestrator";
      readonly output?: RunOutput;
    }
  | { readonly type: "Cancel"; readonly reason: string }
  /** The node's report of a cancelled execution's end, which came after the cancel: what it printed is kept. */
  | { readonly type: "KeepOutput"; readonly output: RunOutput }
  | { readonly type: "TimeOutExecution" }
  /** The node left the work it was sent unanswered for its whole answer bound. */
  | { readonly type: "TimeOutAnswer" };

export type ExecutionCommandType = ExecutionCommand["type"];

export type ExecutionRefusal =
  { readonly code: "NotFound"; readonly message: string } | { readonly code: "Conflict"; readonly message: string };
