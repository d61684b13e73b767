import type { NatsConnection } from "nats";
import type { Logger } from "pino";
import { boundedStep, type StepOutcome } from "../lifecycle/bounded-step.ts";

/** A healthy drain takes milliseconds; a wedged server would hold it until the ping timeout (minutes). */
export const NATS_DRAIN_TIMEOUT_MS = 2_000;

/**
 * Drains the connection (pending replies and publishes go out), or closes it outright if the server does not answer in
 * time; closed either way when it returns.
 */
export async function closeNatsConnection(
  nc: NatsConnection,
  logger: Logger,
  timeoutMs = NATS_DRAIN_TIMEOUT_MS,
): Promise<StepOutcome> {
  if (nc.isClosed()) return "done";
  const hard = () => nc.close();
  const outcome = await boundedStep("draining the NATS connection", () => nc.drain(), { timeoutMs, logger, hard });
  // Not only after a failure: nats.js resolves a drain whose flush a reconnect attempt dropped (the server gone)
  // without closing, and the connection would go on reconnecting.
  if (!nc.isClosed()) await boundedStep("closing the NATS connection", hard, { timeoutMs, logger });
  return outcome;
}
