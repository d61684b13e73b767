import type { Logger } from "pino";
import type { StopSteps } from "../lifecycle/stop-steps.ts";
import { type Module, type ModulePhase, type Phase, stepOf } from "./module.ts";

export interface StartUpPhase {
  readonly name: Phase;
  readonly run: () => Promise<void> | void;
}

/**
 * Runs the phases one after the other, each logged with its time (`{ phase, ms }`), so that an operator sees where a
 * slow start spends it. A phase that fails stops start-up: the stop steps added so far run (last added first) and
 * its error is thrown.
 */
export async function startInPhases(
  phases: readonly StartUpPhase[],
  options: { readonly logger: Logger; readonly stops: StopSteps },
): Promise<void> {
  const { logger, stops } = options;
  for (const { name, run } of phases) {
    // At debug: a start that cannot open its store or NATS prints its reason alone (the error), as before any phase.
    logger.debug({ phase: name }, "start-up phase starting");
    const started = performance.now();
    try {
      await run();
    } catch (e) {
      // The error itself is the caller's to report (its message names what failed); at debug, where start-up stopped.
      logger.debug({ phase: name, ms: Math.round(performance.now() - started) }, "start-up phase failed");
      await stops.stop();
      throw e;
    }
    logger.info({ phase: name, ms: Math.round(performance.now() - started) }, "start-up phase done");
  }
}

/** Each module's step for `phase`, in the list's order (each step's time at debug level). */
export async function runModuleSteps(modules: readonly Module[], phase: ModulePhase, logger: Logger): Promise<void> {
  for (const module of modules) {
    const step = stepOf(module, phase);
    if (step === undefined) continue;
    const started = performance.now();
    await step();
    logger.debug({ phase, module: module.name, ms: Math.round(performance.now() - started) }, "module step done");
  }
}
