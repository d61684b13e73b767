import type { Schema } from "effect";
import { ProtocolError, validate } from "./codec.ts";
import {
  AskForBid,
  BidAccepted,
  BidRejected,
  CancelExecution,
  ExecutionCompleted,
  ExecutionFailed,
  ExecutionStarted,
  RunExecution,
  type ExecutionReport,
  type WorkMessage,
} from "./work-messages.ts";

const WORK: Record<string, Schema.Schema<WorkMessage, unknown>> = { AskForBid, RunExecution, CancelExecution } as never;
const REPORTS: Record<string, Schema.Schema<ExecutionReport, unknown>> = {
  BidAccepted,
  BidRejected,
  ExecutionStarted,
  ExecutionCompleted,
  ExecutionFailed,
} as never;

/**
 * Validates against the schema its `Type` names, so that a refusal names the one field that is wrong, not the whole
 * union.
 */
function validateTagged<A>(kinds: Record<string, Schema.Schema<A, unknown>>, raw: unknown): A {
  const type = typeof raw === "object" && raw !== null ? (raw as { Type?: unknown }).Type : undefined;
  const schema = typeof type === "string" && Object.hasOwn(kinds, type) ? kinds[type] : undefined;
  if (schema === undefined)
    throw new ProtocolError(
      `Type must be one of ${Object.keys(kinds).join(", ")} (got ${JSON.stringify(type) ?? "none"})`,
    );
  return validate(schema, raw);
}

/** A work message (orchestrator → node), already unpacked. */
export const validateWorkMessage = (raw: unknown): WorkMessage => validateTagged(WORK, raw);
/** An execution report (node → orchestrator), already unpacked. */
export const validateExecutionReport = (raw: unknown): ExecutionReport => validateTagged(REPORTS, raw);
