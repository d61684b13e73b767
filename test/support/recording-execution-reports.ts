import type { ExecutionReports } from "../../src/actors/execution-reports.ts";
import { forbidden } from "../../src/errors/shoal-error.ts";
import type { ExecutionReport } from "../../src/transport/work-messages.ts";
import { waitFor } from "./shoal-process.ts";

/**
 * A real ExecutionReports port that keeps what it is handed, in order, and refuses a report from a
 * node its execution is not placed on (what the execution actors will do): the recording port a
 * test of the report handler drives.
 */
export class RecordingExecutionReports implements ExecutionReports {
  readonly received: ExecutionReport[] = [];
  /** Execution id → the node it is placed on. */
  readonly placements = new Map<string, string>();

  private take(report: ExecutionReport): Promise<void> {
    const placed = this.placements.get(report.ExecutionID);
    if (placed !== undefined && placed !== report.NodeID) {
      return Promise.reject(forbidden(`execution ${report.ExecutionID} is not placed on node ${report.NodeID}`));
    }
    this.received.push(report);
    return Promise.resolve();
  }

  bidAccepted = (r: Extract<ExecutionReport, { Type: "BidAccepted" }>) => this.take(r);
  bidRejected = (r: Extract<ExecutionReport, { Type: "BidRejected" }>) => this.take(r);
  started = (r: Extract<ExecutionReport, { Type: "ExecutionStarted" }>) => this.take(r);
  completed = (r: Extract<ExecutionReport, { Type: "ExecutionCompleted" }>) => this.take(r);
  failed = (r: Extract<ExecutionReport, { Type: "ExecutionFailed" }>) => this.take(r);

  of(executionId: string): ExecutionReport[] {
    return this.received.filter((r) => r.ExecutionID === executionId);
  }

  types(executionId: string): string[] {
    return this.of(executionId).map((r) => r.Type);
  }

  /** Waits for the execution's report of that type and returns it. */
  async next<T extends ExecutionReport["Type"]>(
    executionId: string,
    type: T,
    timeoutMs = 20_000,
  ): Promise<Extract<ExecutionReport, { Type: T }>> {
    await waitFor(
      () => this.of(executionId).some((r) => r.Type === type),
      timeoutMs,
      () => `${type} of ${executionId}; got ${this.types(executionId).join(", ") || "nothing"}`,
    );
    return this.of(executionId).find((r) => r.Type === type) as Extract<ExecutionReport, { Type: T }>;
  }
}
