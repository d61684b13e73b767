import { randomUUID } from "node:crypto";
import type { Clock } from "../../src/actors/clock.ts";
import type { NodeWorkClient } from "../../src/transport/node-work-client.ts";
import {
  askForBidMessage,
  cancelExecutionMessage,
  runExecutionMessage,
  type ExecutionWork,
} from "../../src/transport/work-message-builders.ts";
import type { WorkMessage } from "../../src/transport/work-messages.ts";

export interface SentWork {
  readonly nodeId: string;
  readonly message: WorkMessage;
  /** The orchestrator's clock when it was published. */
  readonly at: number;
}

/**
 * The transport boundary of work sent to nodes, recorded instead of published: each message is
 * made by the builders NodeWorkClient sends (a malformed one throws the same ProtocolError),
 * then kept with the clock's time. `failNext` makes the next publishes throw, as a NATS
 * connection in trouble does.
 */
export class RecordingWorkClient implements Pick<NodeWorkClient, "askForBid" | "runExecution" | "cancelExecution"> {
  readonly sent: SentWork[] = [];
  failNext = 0;

  constructor(private readonly clock: Clock) {}

  askForBid(work: ExecutionWork): string {
    return this.send(askForBidMessage(work, randomUUID()));
  }

  runExecution(work: ExecutionWork): string {
    return this.send(runExecutionMessage(work, randomUUID()));
  }

  cancelExecution(nodeId: string, executionId: string, reason: string): string {
    return this.send(cancelExecutionMessage(nodeId, executionId, reason, randomUUID()));
  }

  /** The messages of this type sent for this execution, in order. */
  of(type: WorkMessage["Type"], executionId: string): SentWork[] {
    return this.sent.filter((s) => s.message.Type === type && s.message.ExecutionID === executionId);
  }

  private send(message: WorkMessage): string {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error("NATS connection is closed");
    }
    this.sent.push({ nodeId: message.NodeID, message, at: this.clock.now() });
    return message.MessageID;
  }
}
