import type {
  BidAccepted,
  BidRejected,
  ExecutionCompleted,
  ExecutionFailed,
  ExecutionStarted,
} from "../transport/work-messages.ts";

/**
 * Where the orchestrator's execution report handler hands a node's validated reports. Each
 * report's `NodeID` is the node that sent it (NATS permissions tie the subject to the sender, and
 * the handler checks the message against the subject); an implementation must still refuse a
 * report for an execution that is not placed on that node (`Forbidden`), since a node may only
 * speak for its own executions. A refusal is a ShoalError; it reaches the node as the reply, and
 * the node does not send that report again. Resolving means the report is stored (or was already):
 * the node then forgets it, so nothing acknowledged may be lost.
 */
export interface ExecutionReports {
  bidAccepted(report: BidAccepted): Promise<void>;
  bidRejected(report: BidRejected): Promise<void>;
  started(report: ExecutionStarted): Promise<void>;
  completed(report: ExecutionCompleted): Promise<void>;
  failed(report: ExecutionFailed): Promise<void>;
}
