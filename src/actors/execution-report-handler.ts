import type { Msg, NatsConnection, Subscription } from "nats";
import type { Logger } from "pino";
import { ShoalError, asShoalError, badRequest } from "../errors/shoal-error.ts";
import { ProtocolError, encode, unpack } from "../transport/codec.ts";
import { validateExecutionReport } from "../transport/decode-work.ts";
import type { ProtocolResponse } from "../transport/messages.ts";
import {
  EXECUTION_REPORT_QUEUE,
  EXECUTION_REPORT_SUBSCRIPTION,
  executionReportNodeId,
  isNodeWorkSubject,
  nodeInboxPrefix,
} from "../transport/subjects.ts";
import type { ExecutionReports } from "./execution-reports.ts";
import { RefusalLog } from "../logging/refusal-log.ts";

export interface ExecutionReportHandlerOptions {
  /** The nats-server enforces per-node keys: replies only on the node's own inbox or work subjects. */
  readonly enforcesNodeKeys: boolean;
  readonly logger: Logger;
  /**
   * Among several orchestrators: every one hears every report (no queue group) and only the holder of the jobs duty
   * takes it, so that a report is stored by the orchestrator whose job workflows act on it next, from its executions
   * as it holds them (a report another stored would not reach them in time). The others leave it unanswered, and the
   * node sends it again until the holder answers. Absent: one orchestrator, which takes every report.
   */
  readonly takes?: () => boolean;
}

const ACCEPTED = encode({ Accepted: true } satisfies ProtocolResponse);

/**
 * The orchestrator's side of a node's execution reports (docs/protocol.md, Work): each one is
 * decoded and validated, its `NodeID` checked against the subject's node (which NATS permissions
 * tie to the sender), and only then handed to `ExecutionReports`; the node gets the outcome as the
 * reply. A bad report is refused with the reason and reaches nothing.
 */
export class ExecutionReportHandler {
  private subscription: Subscription | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly refusalLog: RefusalLog;

  constructor(
    private readonly nc: NatsConnection,
    private readonly reports: ExecutionReports,
    private readonly options: ExecutionReportHandlerOptions,
  ) {
    this.refusalLog = new RefusalLog(options.logger);
  }

  start(): void {
    const takes = this.options.takes;
    this.subscription = this.nc.subscribe(EXECUTION_REPORT_SUBSCRIPTION, {
      ...(takes ? {} : { queue: EXECUTION_REPORT_QUEUE }),
      callback: (err, msg) => {
        if (err) {
          this.options.logger.error({ err }, "execution report subscription error");
          return;
        }
        if (takes && !takes()) return;
        const work = this.handle(msg);
        const tracked = work.finally(() => this.inFlight.delete(tracked));
        this.inFlight.add(tracked);
      },
    });
  }

  private async dispatch(msg: Msg): Promise<void> {
    const nodeId = executionReportNodeId(msg.subject);
    if (nodeId === undefined) throw badRequest(`unknown subject ${msg.subject}`);
    const report = validateExecutionReport(unpack(msg.data));
    if (report.NodeID !== nodeId)
      throw badRequest(`subject is for node ${nodeId} but the message is from ${report.NodeID}`);
    switch (report.Type) {
      case "BidAccepted":
        return this.reports.bidAccepted(report);
      case "BidRejected":
        return this.reports.bidRejected(report);
      case "ExecutionStarted":
        return this.reports.started(report);
      case "ExecutionCompleted":
        return this.reports.completed(report);
      case "ExecutionFailed":
        return this.reports.failed(report);
    }
  }

  private async handle(msg: Msg): Promise<void> {
    let response: Uint8Array = ACCEPTED;
    try {
      await this.dispatch(msg);
    } catch (e) {
      response = encode(this.refusal(msg.subject, e));
    }
    this.reply(msg, response);
  }

  private refusal(subject: string, e: unknown): ProtocolResponse {
    const error = e instanceof ProtocolError ? badRequest(`invalid message: ${e.message}`) : asShoalError(e);
    if (error.kind === "Internal")
      this.options.logger.error({ subject, kind: error.kind, reason: error.message }, "execution report refused");
    else this.refusalLog.warn("execution report refused", error.kind, () => ({ subject, reason: error.message }));
    if (error.kind === "Internal" && !(e instanceof ShoalError))
      this.options.logger.error({ err: e }, "execution report failed");
    return {
      Accepted: false,
      Reason: error.message,
      Code: error.kind,
      ...(error.retryAfterSeconds === undefined ? {} : { RetryAfter: error.retryAfterSeconds }),
    };
  }

  /** Only on the sender's own inbox or work subjects (as NodeProtocolHandler): never where a node names. */
  private reply(msg: Msg, data: Uint8Array): void {
    const reply = msg.reply;
    if (reply === undefined || reply === "") return;
    const nodeId = executionReportNodeId(msg.subject);
    const own =
      nodeId !== undefined && (reply.startsWith(`${nodeInboxPrefix(nodeId)}.`) || isNodeWorkSubject(nodeId, reply));
    if (!own && (this.options.enforcesNodeKeys || !reply.startsWith("_INBOX."))) {
      const subject = msg.subject;
      this.refusalLog.warn("not answering on a reply subject outside the sender's own inbox", "Forbidden", () => ({
        subject,
        reply,
      }));
      return;
    }
    msg.respond(data);
  }

  async stop(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
  }
}
