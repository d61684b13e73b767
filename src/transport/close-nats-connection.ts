import type { NatsConnection } from "nats";
import type { Logger } from "pino";
import { boundedStep, type StepOutcome } from "../lifecycle/bounded-step.ts";

/** A healthy drain takes milliseconds; a wedged server would hold it until the ping timeout (minutes). */
export const NATS_DRAIN_TIMEOUT_MS = 2_000;

/**
 * Drains the connection (pending replies and publishes go out), or closes it outright if the server does not answer in
 * time.
 */
export async function closeNatsConnection(
  nc: NatsConnection,
  logger: Logger,
  timeoutMs = NATS_DRAIN_TIMEOUT_MS,
): Promise<StepOutcome> {
  if (nc.isClosed()) return "done";
  const hard = () => nc.close();
  const outcome = await boundedStep("draining the NATS connection", () => nc.drain(), { timeoutMs, logger, hard });
  if (outcome === "failed" && !nc.isClosed())
    await boundedStep("closing the NATS connection", hard, { timeoutMs, logger });
  return outcome;
}
