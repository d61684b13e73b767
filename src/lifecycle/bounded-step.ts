import type { Logger } from "pino";
import { within } from "./within.ts";

export interface BoundedStepOptions {
  readonly timeoutMs: number;
  readonly logger: Logger;
  /**
   * Run when the step has not finished in time: close without waiting for anyone (it is not awaited longer than
   * timeoutMs either).
   */
  readonly hard?: () => Promise<unknown> | unknown;
}

export type StepOutcome = "done" | "timed-out" | "failed";

/**
 * One step of a shutdown, waited for at most `timeoutMs`: a wedged peer (a stopped NATS server,
 * a hung store) must not keep the process from exiting. After the bound the step is abandoned,
 * `hard` runs, and the log says so. Never throws: the next step runs regardless.
 */
export async function boundedStep(
  name: string,
  step: () => Promise<unknown> | unknown,
  options: BoundedStepOptions,
): Promise<StepOutcome> {
  const { timeoutMs, logger } = options;
  try {
    const result = await within(Promise.resolve().then(step), timeoutMs);
    if (result.ok) return "done";
  } catch (err) {
    logger.error({ err, step: name }, "error while stopping");
    return "failed";
  }
  logger.warn({ step: name, timeoutMs }, `${name} did not finish within ${timeoutMs}ms; closing hard`);
  if (options.hard) {
    try {
      const result = await within(Promise.resolve().then(options.hard), timeoutMs);
      if (!result.ok)
        logger.error({ step: name, timeoutMs }, `${name}: hard close did not finish either; abandoning it`);
    } catch (err) {
      logger.error({ err, step: name }, "error while closing hard");
    }
  }
  return "timed-out";
}
