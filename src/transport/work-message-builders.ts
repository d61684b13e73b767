import { validate } from "./codec.ts";
import { AskForBid, CancelExecution, RunExecution, type WorkTask } from "./work-messages.ts";

export interface ExecutionWork {
  readonly nodeId: string;
  readonly executionId: string;
  readonly jobId: string;
  readonly task: WorkTask;
}

/*
 * The one place a work message is put together: the real client and the tests' recording client
 * both send what these return, so what a test sees is what a node would receive. Each is validated
 * as it is made, so a malformed one throws ProtocolError naming the field and is never sent.
 */

/** Would the node take it now? */
export const askForBidMessage = (work: ExecutionWork, messageId: string): AskForBid =>
  validate(AskForBid, {
    Type: "AskForBid",
    MessageID: messageId,
    NodeID: work.nodeId,
    ExecutionID: work.executionId,
    JobID: work.jobId,
    Task: work.task,
  });

/** Run it. */
export const runExecutionMessage = (work: ExecutionWork, messageId: string): RunExecution =>
  validate(RunExecution, {
    Type: "RunExecution",
    MessageID: messageId,
    NodeID: work.nodeId,
    ExecutionID: work.executionId,
    JobID: work.jobId,
    Task: work.task,
  });

/** Stop it. */
export const cancelExecutionMessage = (
  nodeId: string,
  executionId: string,
  reason: string,
  messageId: string,
): CancelExecution =>
  validate(CancelExecution, {
    Type: "CancelExecution",
    MessageID: messageId,
    NodeID: nodeId,
    ExecutionID: executionId,
    Reason: reason,
  });
