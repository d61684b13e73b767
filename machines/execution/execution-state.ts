import type { AllocatedResources, PublishedResult, RunOutput } from "../../src/events/catalog/execution-events.ts";
import type { JobType } from "../job/job-spec.ts";
import type { ComputeStateName, DesiredStateName } from "./execution-states.ts";

/**
 * The answer bound of an execution whose creation recorded none (stored before it was):
 * `Orchestrator.Scheduler.ExecutionAnswerTimeout`'s default.
 */
export const DEFAULT_ANSWER_TIMEOUT_MS = 300_000;

export const EXECUTION_STATE_VERSION = 3;

/**
 * One execution as its stored events describe it: what its actor decides on and what the read
 * model serves as Bacalhau's models.Execution.
 */
export interface ExecutionState {
  readonly executionId: string;
  readonly jobId: string;
  readonly namespace: string;
  readonly nodeId: string;
  readonly jobType: JobType | undefined;
  readonly jobVersion: number;
  readonly partitionIndex: number;
  /** Undefined until ExecutionCreated. */
  readonly computeState: ComputeStateName | undefined;
  readonly computeMessage: string;
  readonly desiredState: DesiredStateName | undefined;
  readonly desiredMessage: string;
  readonly allocatedResources: typeof AllocatedResources.Type;
  readonly runOutput: RunOutput | undefined;
  /** Where its results were published (Completed only); states snapshotted before results lack it. */
  readonly publishedResult?: PublishedResult | undefined;
  /**
   * The limits its node said it runs it under, from its start on (served as ComputeState.Details).
   * Undefined when the node said none; states snapshotted before it was added lack it, which reads
   * the same, since no event then held any.
   */
  readonly limits?: Readonly<Record<string, string>> | undefined;
  readonly previousExecution: string;
  /** Seconds; 0 for none. */
  readonly executionTimeout: number;
  readonly timeoutBuffer: number;
  /** How long its node may leave the work it is sent unanswered (its bid, its start) before it ends, in ms. */
  readonly answerTimeoutMs: number;
  /** When it began executing (BidAccepted), ms since the epoch: its ExecutionTimeout counts from here. */
  readonly executingSince: number | undefined;
  /** Bacalhau's Revision: 1 at creation, +1 per update. */
  readonly revision: number;
  /** Milliseconds since the epoch (Bacalhau's are these × 10⁶ ns). */
  readonly createTime: number;
  readonly modifyTime: number;
}

export function initialExecutionState(executionId: string): ExecutionState {
  return {
    executionId,
    jobId: "",
    namespace: "",
    nodeId: "",
    jobType: undefined,
    jobVersion: 0,
    partitionIndex: 0,
    computeState: undefined,
    computeMessage: "",
    desiredState: undefined,
    desiredMessage: "",
    allocatedResources: { CPU: 0, Memory: 0, Disk: 0, GPU: 0 },
    runOutput: undefined,
    limits: undefined,
    previousExecution: "",
    executionTimeout: 0,
    timeoutBuffer: 0,
    answerTimeoutMs: DEFAULT_ANSWER_TIMEOUT_MS,
    executingSince: undefined,
    revision: 0,
    createTime: 0,
    modifyTime: 0,
  };
}
