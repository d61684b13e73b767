import { Counter, Gauge, Registry } from "prom-client";
import {
  EXECUTION_FAILURE_REASONS,
  type ExecutionFailureReason,
  type ExecutionObserver,
} from "../compute/execution-failure-reason.ts";
import { exposition, registerBuildInfo } from "./process-metrics.ts";

/** A compute node's /metrics: its executions, container starts and failures by reason, and the process's metrics. */
export class ComputeMetrics implements ExecutionObserver {
  readonly registry = new Registry();
  private readonly starts: Counter;
  private readonly failures: Counter<"reason">;

  /** `running`: the executions the node's engine runs now, asked on each scrape. */
  constructor(running: () => number) {
    const registers = [this.registry];
    registerBuildInfo(this.registry, "compute");
    new Gauge({
      name: "shoal_compute_executions_running",
      help: "Executions this compute node runs now (their containers, adopted ones included)",
      registers,
      collect() {
        this.set(running());
      },
    });
    this.starts = new Counter({
      name: "shoal_compute_container_starts_total",
      help: "Containers this compute node started for executions (not those adopted after a restart)",
      registers,
    });
    this.failures = new Counter({
      name: "shoal_compute_execution_failures_total",
      help:
        "Executions that failed on this compute node, by reason: non-zero-exit, timeout, oom-killed, image-missing, " +
        "input-failed (an input could not be had), rejected-by-engine, engine-failed, lost (gone after a restart), " +
        "refused (work the node would not run)",
      labelNames: ["reason"],
      registers,
    });
    // Every reason from the start: a rate over a series that appears with its first failure misses that failure.
    for (const reason of EXECUTION_FAILURE_REASONS) this.failures.inc({ reason }, 0);
  }

  containerStarted(): void {
    this.starts.inc();
  }

  executionFailed(reason: ExecutionFailureReason): void {
    this.failures.inc({ reason });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  scrape(): Promise<string> {
    return exposition(this.registry);
  }
}
