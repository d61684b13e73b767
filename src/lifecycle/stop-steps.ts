import type { Logger } from "pino";
import { boundedStep } from "./bounded-step.ts";

export interface StopStep {
  readonly name: string;
  readonly run: () => Promise<unknown> | unknown;
  /** After the bound: close without waiting. */
  readonly hard?: () => unknown;
  readonly timeoutMs?: number;
}

const STOP_STEP_TIMEOUT_MS = 5_000;

/**
 * How a process stops what it started: each part adds its step where it is built, and stop runs them last added
 * first, each bounded (a wedged NATS or store must not keep the process from exiting). A second stop waits for the
 * first.
 */
export class StopSteps {
  private readonly steps: StopStep[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  add(step: StopStep): void {
    this.steps.push(step);
  }

  /** The steps' names in the order stop runs them. */
  get order(): string[] {
    return this.steps.map((s) => s.name).reverse();
  }

  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      for (const { name, run, hard, timeoutMs } of [...this.steps].reverse()) {
        this.logger.debug({ step: name }, "stop step");
        await boundedStep(name, run, {
          timeoutMs: timeoutMs ?? STOP_STEP_TIMEOUT_MS,
          logger: this.logger,
          ...(hard ? { hard } : {}),
        });
      }
    })());
  }
}
