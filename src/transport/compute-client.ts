import { randomUUID } from "node:crypto";
import { nuid, type Msg, type NatsConnection } from "nats";
import type { NodeInfo, ResourceReport } from "../events/catalog/node-info.ts";
import { decode, encode } from "./codec.ts";
import { joinProof, signJoin, type JoinKey } from "./join-proof.ts";
import { logBatchSubject, logReadSubject, type LogBatch } from "./log-messages.ts";
import { ProtocolResponse } from "./messages.ts";
import { isUnreachable } from "./unreachable.ts";
import {
  computeSubject,
  executionReportSubject,
  executionWorkSubject,
  heartbeatRefusedSubject,
  joinSubject,
  nodeReplyPrefix,
  nodeWorkSubjects,
} from "./subjects.ts";
import type { ExecutionReport } from "./work-messages.ts";

export class OrchestratorUnreachableError extends Error {
  override readonly name = "OrchestratorUnreachableError";
}

interface Pending {
  readonly resolve: (response: ProtocolResponse) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** nats.js's failures that mean the orchestrator cannot be reached, as the agent reports them; others as they are. */
const asUnreachable = (e: unknown): unknown =>
  isUnreachable(e)
    ? new OrchestratorUnreachableError(`orchestrator unreachable (${(e as { code?: string }).code})`)
    : e;

/** An error shaped as nats.js's own (`code`), so that isUnreachable() reads it the same way. */
const natsLikeError = (code: string, message: string) => Object.assign(new Error(message), { code });

/**
 * The compute node's side of the protocol, msgpack both ways: heartbeats are published (no
 * reply; a refusal arrives on the node's own subject), every other call is one request/reply.
 *
 * A node's calls hold ONE subscription, its work subjects `shoal.work.<id>.>`: their replies come
 * back under it (`shoal.work.<id>.reply.<tag>.<n>`) beside the heartbeat refusals and the work the
 * orchestrator sends (`shoal.work.<id>.execution`, handed to `onWork`), and replies are matched
 * to their requests here, not by nats.js's request inbox (a second subscription, `_INBOX_NODE.<id>.<nuid>.*`).
 * Behind leaf servers every subscription of every node is interest the hub holds, so this halves
 * the hub's entries per node. A join is still a nats.js request: it runs on the join login, which
 * may only subscribe to the join inbox.
 */
export class ComputeClient {
  private sequence = 0;
  private subscribed = false;
  private readonly replyPrefix: string;
  private nextToken = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly refusalHandlers: ((refusal: ProtocolResponse) => void)[] = [];
  private readonly workHandlers: ((data: Uint8Array) => void)[] = [];
  private readonly logHandlers: ((data: Uint8Array) => void)[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly nodeId: string,
    private readonly timeoutMs = 5000,
  ) {
    this.replyPrefix = `${nodeReplyPrefix(nodeId, nuid.next())}.`;
  }

  /** The one subscription, made on first use (the join connection never makes it: it may not). */
  private subscribe(): void {
    if (this.subscribed) return;
    this.subscribed = true;
    const refused = heartbeatRefusedSubject(this.nodeId);
    const work = executionWorkSubject(this.nodeId);
    const logs = logReadSubject(this.nodeId);
    this.nc.subscribe(nodeWorkSubjects(this.nodeId), {
      callback: (err, msg) => {
        if (err) {
          this.failAll(err);
          return;
        }
        if (msg.subject === refused) this.refusal(msg);
        else if (msg.subject.startsWith(this.replyPrefix)) this.reply(msg.subject.slice(this.replyPrefix.length), msg);
        else if (msg.subject === work) for (const handle of this.workHandlers) handle(msg.data);
        else if (msg.subject === logs) for (const handle of this.logHandlers) handle(msg.data);
        // Anything else under the work subjects is for a later protocol: not ours to read yet.
      },
    });
    // Requests still waiting when the connection ends get the error a nats.js request would.
    void this.nc.closed().then(() => this.failAll(natsLikeError("CONNECTION_CLOSED", "connection closed")));
  }

  private refusal(msg: Msg): void {
    let refusal: ProtocolResponse;
    try {
      refusal = decode(ProtocolResponse, msg.data);
    } catch {
      return;
    }
    if (!refusal.Accepted) for (const handle of this.refusalHandlers) handle(refusal);
  }

  private reply(token: string, msg: Msg): void {
    const waiting = this.pending.get(token);
    if (waiting === undefined) return; // late (timed out) or not ours
    this.pending.delete(token);
    clearTimeout(waiting.timer);
    // What NATS sends when nobody is subscribed to the request's subject: no payload, status 503.
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      waiting.reject(new OrchestratorUnreachableError("orchestrator unreachable (503)"));
      return;
    }
    try {
      waiting.resolve(decode(ProtocolResponse, msg.data));
    } catch (e) {
      waiting.reject(e);
    }
  }

  private failAll(error: unknown): void {
    const failed = [...this.pending.values()];
    this.pending.clear();
    for (const waiting of failed) {
      clearTimeout(waiting.timer);
      waiting.reject(asUnreachable(error));
    }
  }

  private async request(subject: string, body: Record<string, unknown>): Promise<ProtocolResponse> {
    try {
      const reply = await this.nc.request(subject, encode(body), { timeout: this.timeoutMs });
      return decode(ProtocolResponse, reply.data);
    } catch (e) {
      // 503: no orchestrator subscribed; the rest: NATS or the orchestrator down.
      throw asUnreachable(e);
    }
  }

  /** A request of the node's own, answered on its work subjects (see the class). */
  private call(subject: string, body: Record<string, unknown>): Promise<ProtocolResponse> {
    this.subscribe();
    const token = String(this.nextToken++);
    const data = encode({ MessageID: randomUUID(), ...body });
    return new Promise<ProtocolResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(token);
        reject(new OrchestratorUnreachableError("orchestrator unreachable (TIMEOUT)"));
      }, this.timeoutMs);
      this.pending.set(token, { resolve, reject, timer });
      try {
        this.nc.publish(subject, data, { reply: this.replyPrefix + token });
      } catch (e) {
        this.pending.delete(token);
        clearTimeout(timer);
        reject(asUnreachable(e));
      }
    });
  }

  /** Registers this node and binds its key to it, proving the join token (without sending it) and the key. */
  join(info: NodeInfo, key: JoinKey, joinToken: string, rejoin = false): Promise<ProtocolResponse> {
    const messageId = randomUUID();
    return this.request(joinSubject(this.nodeId), {
      MessageID: messageId,
      Info: info,
      PublicKey: key.publicKey,
      Proof: joinProof(joinToken, this.nodeId, key.publicKey, messageId),
      Signature: signJoin(key, this.nodeId, messageId),
      ...(rejoin ? { Rejoin: true } : {}),
    });
  }

  /**
   * Publishes a heartbeat, Bacalhau's `{NodeID, Sequence}`, and expects no reply: a refusal
   * comes to `onHeartbeatRefused`. Throws only when the connection is closed.
   */
  heartbeat(): void {
    this.sequence += 1;
    this.nc.publish(computeSubject(this.nodeId, "heartbeat"), encode({ NodeID: this.nodeId, Sequence: this.sequence }));
  }

  /** A heartbeat as a request, answered: how an agent checks on start that the orchestrator still knows it. */
  heartbeatRequest(): Promise<ProtocolResponse> {
    this.sequence += 1;
    return this.call(computeSubject(this.nodeId, "heartbeat"), { NodeID: this.nodeId, Sequence: this.sequence });
  }

  /**
   * Refusals of published heartbeats (the orchestrator's reply, on the node's own subject); undecodable ones are
   * dropped.
   */
  onHeartbeatRefused(handle: (refusal: ProtocolResponse) => void): void {
    this.refusalHandlers.push(handle);
    this.subscribe();
  }

  updateInfo(info: NodeInfo): Promise<ProtocolResponse> {
    return this.call(computeSubject(this.nodeId, "info"), { Info: info });
  }

  updateResources(report: ResourceReport): Promise<ProtocolResponse> {
    return this.call(computeSubject(this.nodeId, "resources"), { NodeID: this.nodeId, Resources: report });
  }

  /** Work the orchestrator sends this node (`shoal.work.<id>.execution`), undecoded: the receiver validates it. */
  onWork(handle: (data: Uint8Array) => void): void {
    this.workHandlers.push(handle);
    this.subscribe();
  }

  /** Log reads the orchestrator sends this node (`shoal.work.<id>.logs`, src/transport/log-messages.ts), undecoded. */
  onLogRequest(handle: (data: Uint8Array) => void): void {
    this.logHandlers.push(handle);
    this.subscribe();
  }

  /**
   * One log batch, published on the node's own `shoal.compute.<id>.logs` (answers are matched by StreamID, not by reply
   * subject).
   */
  publishLogBatch(batch: LogBatch): void {
    this.nc.publish(logBatchSubject(this.nodeId), encode(batch));
  }

  /**
   * One execution report, answered like every call; the report's own MessageID is kept, so a report sent again is the
   * same one.
   */
  reportExecution(report: ExecutionReport): Promise<ProtocolResponse> {
    return this.call(executionReportSubject(this.nodeId), { ...report });
  }
}
