import { randomUUID } from "node:crypto";
import type { NatsConnection } from "nats";
import { encodeMessage } from "./codec.ts";
import { validateWorkMessage } from "./decode-work.ts";
import { executionWorkSubject } from "./subjects.ts";
import type { WorkTask } from "./work-messages.ts";

export interface ExecutionWork {
  readonly nodeId: string;
  readonly executionId: string;
  readonly jobId: string;
  readonly task: WorkTask;
}

/**
 * The orchestrator's side of sending work to a compute node (docs/protocol.md, Work): published on
 * the node's own `shoal.work.<id>.execution`, which only that node may read. Nothing is answered
 * on the spot (a node may not publish replies outside its own subjects): the node's reports come
 * back through the execution report handler, and a caller that hears nothing sends the same
 * message again (the node answers a repeat with where the execution stands). Every message is
 * validated before it leaves, so a malformed one throws here (ProtocolError) and is never sent.
 */
export class NodeWorkClient {
  constructor(private readonly nc: NatsConnection) {}

  private send(nodeId: string, message: Record<string, unknown>): string {
    const messageId = randomUUID();
    const checked = validateWorkMessage({ ...message, MessageID: messageId, NodeID: nodeId });
    this.nc.publish(executionWorkSubject(nodeId), encodeMessage(checked));
    return messageId;
  }

  /** Would the node take it now? Answered BidAccepted or BidRejected; nothing runs. Returns the MessageID. */
  askForBid(work: ExecutionWork): string {
    return this.send(work.nodeId, {
      Type: "AskForBid",
      ExecutionID: work.executionId,
      JobID: work.jobId,
      Task: work.task,
    });
  }

  /** Run it: BidRejected when it does not fit, else BidAccepted, ExecutionStarted and its end. */
  runExecution(work: ExecutionWork): string {
    return this.send(work.nodeId, {
      Type: "RunExecution",
      ExecutionID: work.executionId,
      JobID: work.jobId,
      Task: work.task,
    });
  }

  /** Stop it; the node reports it failed (cancelled) once its container is gone. */
  cancelExecution(nodeId: string, executionId: string, reason: string): string {
    return this.send(nodeId, { Type: "CancelExecution", ExecutionID: executionId, Reason: reason });
  }
}
