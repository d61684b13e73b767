import type { ExecutionCommand, ExecutionRefusal } from "../../machines/execution/execution-commands.ts";
import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import { isTerminalComputeState } from "../../machines/execution/execution-states.ts";
import { forbidden, notFound } from "../errors/shoal-error.ts";
import type { ExecutionEvent, RunOutput } from "../events/catalog/execution-events.ts";
import type * as Work from "../transport/work-messages.ts";
import { commandContext, type CommandContext } from "./command-context.ts";
import type { EntityRegistry } from "./entity-registry.ts";
import type { ExecutionReports } from "./execution-reports.ts";

const ended = (state: ExecutionState): boolean =>
  state.computeState !== undefined && isTerminalComputeState(state.computeState);

/** A node's RunOutput in the stored event's shape (Bacalhau's RunCommandResult field names). */
const storedOutput = (o: Work.RunOutput): RunOutput => ({
  Stdout: o.STDOUT,
  StdoutTruncated: o.StdoutTruncated,
  stderr: o.STDERR,
  StderrTruncated: o.StderrTruncated,
  ExitCode: o.ExitCode,
  ErrorMsg: o.ErrorMsg,
});

type Report = { readonly NodeID: string; readonly ExecutionID: string; readonly MessageID: string };

/**
 * Node reports as commands to the execution actors. A node speaks only for executions placed on
 * it (Forbidden otherwise, NotFound for one that does not exist). A node's bid is recorded and
 * nothing more: approving it is the jobs workflow's (it reacts to the accepted bid), so that an
 * orchestrator that stops between the two still approves after a restart.
 */
export class ExecutionReportsOnActors implements ExecutionReports {
  /**
   * `nodeReportedEnd`: told of every end a node reports on an execution placed on it, also one the orchestrator had
   * already recorded (a cancel it answered): what it was sending that node about the execution may stop.
   */
  constructor(
    private readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>,
    private readonly nodeReportedEnd: (executionId: string) => void = () => {},
  ) {}

  private async placed(report: Report): Promise<ExecutionState> {
    const state = (await this.executions.get(report.ExecutionID)).state;
    if (state.computeState === undefined) throw notFound(`execution not found: ${report.ExecutionID}`);
    if (state.nodeId !== report.NodeID)
      throw forbidden(`execution ${report.ExecutionID} is not placed on node ${report.NodeID}`);
    return state;
  }

  private context(report: Report, reason: string): CommandContext {
    return commandContext({ type: "node", id: report.NodeID }, { reason, causationId: report.MessageID });
  }

  /**
   * To an AskForBid (batch, service: AskForBidAccepted, to be approved) or a RunExecution (it runs); a repeat changes
   * nothing.
   */
  async bidAccepted(report: Work.BidAccepted): Promise<void> {
    const state = await this.placed(report);
    // Ended meanwhile (cancelled by a stop, a bid rejected): the node hears of it through CancelExecution, if at all.
    if (ended(state)) return;
    await this.executions.execute(
      report.ExecutionID,
      { type: "AcceptBid" },
      this.context(report, "the node accepted the bid"),
    );
  }

  /**
   * Declined before approval: AskForBidRejected; refused when told to run: Failed (the execution decider says which).
   */
  async bidRejected(report: Work.BidRejected): Promise<void> {
    const state = await this.placed(report);
    if (ended(state)) return;
    // A refused ask (sent twice, answered late) once the run is under way: the run is checked on its own.
    if (report.Answers === "AskForBid" && state.desiredState === "Running" && state.computeState !== "New") return;
    await this.executions.execute(
      report.ExecutionID,
      { type: "DeclineBid", reason: report.Reason },
      this.context(report, report.Reason),
    );
  }

  /**
   * The node's end of an execution the orchestrator cancelled before it stopped: the end stands, what it printed is
   * kept (once: the node repeats its report until answered). Any other ended execution's end is already recorded.
   */
  private async keepOutput(state: ExecutionState, report: Report, output: Work.RunOutput | undefined): Promise<void> {
    if (state.computeState !== "Cancelled" || state.runOutput !== undefined || output === undefined) return;
    await this.executions.execute(
      report.ExecutionID,
      { type: "KeepOutput", output: storedOutput(output) },
      this.context(report, "the cancelled execution's output"),
    );
  }

  async started(report: Work.ExecutionStarted): Promise<void> {
    const state = await this.placed(report);
    // Cancelled meanwhile: the node hears of it through CancelExecution, the report is acknowledged.
    if (ended(state)) return;
    const details = report.Details;
    const start: ExecutionCommand = details === undefined ? { type: "Start" } : { type: "Start", details };
    await this.executions.execute(report.ExecutionID, start, this.context(report, "the execution started"));
  }

  async completed(report: Work.ExecutionCompleted): Promise<void> {
    const state = await this.placed(report);
    this.nodeReportedEnd(report.ExecutionID);
    if (ended(state)) return this.keepOutput(state, report, report.RunOutput);
    await this.executions.execute(
      report.ExecutionID,
      {
        type: "Complete",
        output: storedOutput(report.RunOutput),
        ...(report.PublishedResult === undefined ? {} : { publishedResult: report.PublishedResult }),
      },
      this.context(report, "the execution completed"),
    );
  }

  async failed(report: Work.ExecutionFailed): Promise<void> {
    const state = await this.placed(report);
    this.nodeReportedEnd(report.ExecutionID);
    // A cancelled execution's container gone: the end the orchestrator already recorded, its output kept.
    if (ended(state)) return this.keepOutput(state, report, report.RunOutput);
    const output = report.RunOutput === undefined ? {} : { output: storedOutput(report.RunOutput) };
    await this.executions.execute(
      report.ExecutionID,
      { type: "Fail", reason: report.Reason, cause: "Node", ...output },
      this.context(report, report.Reason),
    );
  }
}
