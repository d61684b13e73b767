import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import { ProtocolError } from "../../transport/codec.ts";
import { endFailedJobStep } from "./failed-job-step.ts";
import { DISPATCH } from "./job-flow.ts";
import type { WorkDispatchOptions } from "./work-dispatch.ts";

/** Why an execution's work could not be made into a message (the job, not its node, is at fault). */
export const unsendableMessage = (err: ProtocolError): string =>
  `the orchestrator cannot send this job's work to a node: ${err.message}`;

/**
 * Makes and sends an execution's work message (`message`: which one). One the work protocol
 * refuses (ProtocolError: the stored job does not fit the wire) can never be sent, however often
 * it is tried: the execution and its job end as any failed dispatch step ends them
 * (endFailedJobStep), so that the step ends instead of being delivered again for ever with every
 * job after it waiting. Anything else (NATS trouble) is thrown, to be tried again. True when the
 * work was sent.
 */
export async function sendOrEnd(
  options: Pick<WorkDispatchOptions, "jobs" | "executions" | "logger">,
  execution: ExecutionState,
  message: "AskForBid" | "RunExecution",
  send: () => void,
): Promise<boolean> {
  try {
    send();
    return true;
  } catch (err) {
    if (!(err instanceof ProtocolError)) throw err;
    const reason = unsendableMessage(err);
    const { executionId, jobId } = execution;
    options.logger.error({ err, executionId, jobId }, "an execution's work cannot be sent: it and its job fail");
    await endFailedJobStep(options)({ handler: DISPATCH, entityId: executionId, type: message, reason }, reason);
    return false;
  }
}
