import { randomUUID } from "node:crypto";
import type { NatsConnection } from "nats";
import { encodeMessage } from "./codec.ts";
import { executionWorkSubject } from "./subjects.ts";
import {
  askForBidMessage,
  cancelExecutionMessage,
  runExecutionMessage,
  type ExecutionWork,
} from "./work-message-builders.ts";
import type { WorkMessage } from "./work-messages.ts";

export type { ExecutionWork } from "./work-message-builders.ts";

/** What sends work to nodes: NodeWorkClient on the wire, or a sender that sends some of it again. */
export type WorkClient = Pick<NodeWorkClient, "askForBid" | "runExecution" | "cancelExecution">;

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

  private send(message: WorkMessage): string {
    this.nc.publish(executionWorkSubject(message.NodeID), encodeMessage(message));
    return message.MessageID;
  }

  /** Would the node take it now? Answered BidAccepted or BidRejected; nothing runs. Returns the MessageID. */
  askForBid(work: ExecutionWork): string {
    return this.send(askForBidMessage(work, randomUUID()));
  }

  /** Run it: BidRejected when it does not fit, else BidAccepted, ExecutionStarted and its end. */
  runExecution(work: ExecutionWork): string {
    return this.send(runExecutionMessage(work, randomUUID()));
  }

  /** Stop it; the node reports it failed (cancelled) once its container is gone. */
  cancelExecution(nodeId: string, executionId: string, reason: string): string {
    return this.send(cancelExecutionMessage(nodeId, executionId, reason, randomUUID()));
  }
}
