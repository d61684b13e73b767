import type { Logger } from "pino";
import { reportWhilePending } from "../lifecycle/report-while-pending.ts";
import type { StopSteps } from "../lifecycle/stop-steps.ts";
import { type Module, type ModulePhase, type Phase, stepOf } from "./module.ts";

/** How often a start-up phase or module step that has not finished says so. */
export const STILL_RUNNING_EVERY_MS = 10_000;

export interface StartUpPhase {
  readonly name: Phase;
  readonly run: () => Promise<void> | void;
}

/**
 * Runs the phases one after the other, each logged with its time (`{ phase, ms }`), so that an operator sees where a
 * slow start spends it; one still running says so every 10 s, at warn. A phase that fails stops start-up: the stop
 * steps added so far run (last added first) and its error is thrown.
 */
export async function startInPhases(
  phases: readonly StartUpPhase[],
  options: { readonly logger: Logger; readonly stops: StopSteps; readonly stillRunningEveryMs?: number },
): Promise<void> {
  const { logger, stops, stillRunningEveryMs = STILL_RUNNING_EVERY_MS } = options;
  for (const { name, run } of phases) {
    // At debug: a start that cannot open its store or NATS prints its reason alone (the error), as before any phase.
    logger.debug({ phase: name }, "start-up phase starting");
    const started = performance.now();
    try {
      await reportWhilePending(Promise.resolve().then(run), stillRunningEveryMs, (ms) =>
        logger.warn({ phase: name, ms }, "start-up phase still running"),
      );
    } catch (e) {
      // The error itself is the caller's to report (its message names what failed); at debug, where start-up stopped.
      logger.debug({ phase: name, ms: Math.round(performance.now() - started) }, "start-up phase failed");
      await stops.stop();
      throw e;
    }
    logger.info({ phase: name, ms: Math.round(performance.now() - started) }, "start-up phase done");
  }
}

/**
 * Each module's step for `phase`, in the list's order (each step's time at debug level; one still running says so every
 * 10 s, at warn, with its module).
 */
export async function runModuleSteps(
  modules: readonly Module[],
  phase: ModulePhase,
  logger: Logger,
  stillRunningEveryMs = STILL_RUNNING_EVERY_MS,
): Promise<void> {
  for (const module of modules) {
    const step = stepOf(module, phase);
    if (step === undefined) continue;
    const started = performance.now();
    await reportWhilePending(Promise.resolve().then(step), stillRunningEveryMs, (ms) =>
      logger.warn({ phase, module: module.name, ms }, "start-up step still running"),
    );
    logger.debug({ phase, module: module.name, ms: Math.round(performance.now() - started) }, "module step done");
  }
}
