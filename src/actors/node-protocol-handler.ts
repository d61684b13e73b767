import type { Msg, NatsConnection, Subscription } from "nats";
import type { Logger } from "pino";
import { ShoalError, asShoalError, badRequest, notFound, unauthorized } from "../errors/shoal-error.ts";
import { ProtocolError, decode, encode } from "../transport/codec.ts";
import { verifyJoinProof, verifyJoinSignature } from "../transport/join-proof.ts";
import { agentHeartbeatIdSpan, isAgentHeartbeat } from "../transport/decode-heartbeat.ts";
import { asksForReply, subjectOf } from "../transport/message-bytes.ts";
import {
  HeartbeatRequest,
  JoinRequest,
  UpdateInfoRequest,
  UpdateResourcesRequest,
  type ProtocolResponse,
} from "../transport/messages.ts";
import {
  JOIN_INBOX_PREFIX,
  JOIN_SUBSCRIPTION,
  ORCHESTRATOR_QUEUE,
  ORCHESTRATOR_SUBSCRIPTIONS,
  heartbeatNodeId,
  heartbeatRefusedSubject,
  isHeartbeatSubjectOf,
  isNodeWorkSubject,
  nodeInboxPrefix,
  parseComputeSubject,
  parseJoinSubject,
} from "../transport/subjects.ts";
import { commandContext } from "./command-context.ts";
import type { NodeManager } from "./node-manager.ts";
import { RefusalLimiter } from "./refusal-limiter.ts";
import { AdmissionRefusal } from "./registration-admission.ts";
import { RefusalLog } from "../logging/refusal-log.ts";

/** A node refused (deleted, say) hears it at most this often, however fast it publishes heartbeats. */
export const HEARTBEAT_REFUSAL_INTERVAL_MS = 5000;

export interface NodeProtocolOptions {
  /** The join token (Orchestrator.Auth.Token, or the one generated under DataDir). */
  readonly joinToken: string;
  /** The nats-server enforces per-node keys: a node must reconnect with its own key after joining. */
  readonly enforcesNodeKeys: boolean;
  /**
   * The user JWT a joined node logs in with (the orchestrator's own nats-server); undefined unless the key is the
   * node's live one.
   */
  readonly nodeJwt?: (nodeId: string, publicKey: string) => string | undefined;
  readonly logger: Logger;
  /** Counts each heartbeat message that arrives (the metrics). */
  readonly onHeartbeat?: () => void;
  /** How often one node may be sent a heartbeat refusal (default HEARTBEAT_REFUSAL_INTERVAL_MS). */
  readonly heartbeatRefusalIntervalMs?: number;
  /**
   * Among several orchestrators: every one hears every message (no queue group). Heartbeats are recorded by all, so
   * each liveness table is complete and a partition's new owner needs no grace; a node's requests (join, info,
   * resources) are answered by its partition's owner alone, so a node's writes all go through the one orchestrator
   * that has its latest state, and a refused heartbeat is refused once. Absent: one orchestrator, which takes all.
   */
  readonly cluster?: { readonly owns: (nodeId: string) => boolean };
}

/**
 * The orchestrator's side of the compute protocol: validates every message (subject, schema,
 * join proof) before anything reaches a node actor, and answers each request. Heartbeats are
 * published by current agents (no reply; a refusal goes to the node's own subject, rate-limited)
 * and sent as requests by older ones (answered as before).
 */
export class NodeProtocolHandler {
  private readonly subscriptions: Subscription[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly refusals: RefusalLimiter;
  private readonly refusalLog: RefusalLog;
  /** The encoded accepted reply, kept while the reconnect spread it carries stays the same. */
  private accepted: { spreadMs: number; bytes: Uint8Array } = { spreadMs: -1, bytes: new Uint8Array(0) };

  constructor(
    private readonly nc: NatsConnection,
    private readonly manager: NodeManager,
    private readonly options: NodeProtocolOptions,
  ) {
    this.refusals = new RefusalLimiter(options.heartbeatRefusalIntervalMs ?? HEARTBEAT_REFUSAL_INTERVAL_MS);
    this.refusalLog = new RefusalLog(options.logger);
  }

  start(): void {
    const cluster = this.options.cluster;
    for (const subject of [JOIN_SUBSCRIPTION, ...ORCHESTRATOR_SUBSCRIPTIONS]) {
      this.subscriptions.push(
        this.nc.subscribe(subject, {
          ...(cluster ? {} : { queue: ORCHESTRATOR_QUEUE }),
          callback: (err, msg) => {
            if (err) {
              this.options.logger.error({ err }, "compute protocol subscription error");
              return;
            }
            if (this.agentHeartbeat(msg)) return;
            const heartbeatOf = heartbeatNodeId(msg.subject);
            if (heartbeatOf !== undefined) this.heartbeat(heartbeatOf, msg);
            else if (!cluster || this.ownsRequest(cluster, msg.subject)) this.track(this.handle(msg));
          },
        }),
      );
    }
  }

  /**
   * The orchestrator may publish anywhere, so it answers only on an inbox that belongs to the
   * sender: the node's own (`_INBOX_NODE.<id>.`), or the join login's for joins. Otherwise a node
   * could name `shoal.events.…` or another node's subjects as its reply and have the orchestrator
   * publish there for it. On an external NATS (no per-node inboxes enforced) the default inbox
   * root is answered too.
   */
  private mayReplyTo(subject: string, reply: string): boolean {
    const joining = parseJoinSubject(subject);
    const nodeId = joining ?? parseComputeSubject(subject)?.nodeId;
    if (nodeId !== undefined && reply.startsWith(`${nodeInboxPrefix(nodeId)}.`)) return true;
    // A node's own calls may be answered under its work subjects (ComputeClient's one subscription);
    // a join may not: anyone with the join token may send one naming any node id.
    if (joining === undefined && nodeId !== undefined && isNodeWorkSubject(nodeId, reply)) return true;
    if (joining !== undefined && reply.startsWith(`${JOIN_INBOX_PREFIX}.`)) return true;
    return !this.options.enforcesNodeKeys && reply.startsWith("_INBOX.");
  }

  /** A message may only speak for the node its subject names (which NATS permissions tie to the sender). */
  private checkSender(nodeId: string, claimed: string): void {
    if (claimed !== nodeId) throw badRequest(`subject is for node ${nodeId} but the message is from ${claimed}`);
  }

  private admit(nodeId: string, claimed: string, messageId: string) {
    this.checkSender(nodeId, claimed);
    return commandContext({ type: "node", id: nodeId }, { causationId: messageId });
  }

  private async join(nodeId: string, msg: Msg): Promise<ProtocolResponse> {
    const req = decode(JoinRequest, msg.data);
    const context = this.admit(nodeId, req.Info.NodeID, req.MessageID);
    if (!verifyJoinProof(this.options.joinToken, nodeId, req.PublicKey, req.MessageID, req.Proof)) {
      throw unauthorized("join refused: the proof does not match the orchestrator's join token (Compute.Auth.Token)");
    }
    if (!verifyJoinSignature(nodeId, req.PublicKey, req.MessageID, req.Signature)) {
      throw unauthorized("join refused: the signature was not made with the key the join names (PublicKey)");
    }
    if (req.Info.NodeType !== "Compute") throw badRequest("node is not a compute node");
    if (req.Rejoin === true && !this.manager.isRegistered(nodeId))
      throw notFound(`node ${nodeId} is not registered (deleted?); restart its agent to join again`);
    const result = await this.manager.join(req.Info, req.PublicKey, {
      ...context,
      reason: "joined with the join token",
    });
    const jwt = this.options.nodeJwt?.(nodeId, req.PublicKey);
    return {
      Accepted: true,
      Reason: result.note ?? "node registered",
      Reconnect: this.options.enforcesNodeKeys,
      ...(jwt === undefined ? {} : { UserJWT: jwt }),
      ...this.reconnectSpread(),
    };
  }

  /**
   * Whether this orchestrator answers the request: the owner of the node's partition. A subject naming no node is
   * answered by every orchestrator (it is refused as malformed by each, which costs nothing).
   */
  private ownsRequest(cluster: { readonly owns: (nodeId: string) => boolean }, subject: string): boolean {
    const nodeId = parseJoinSubject(subject) ?? parseComputeSubject(subject)?.nodeId;
    return nodeId === undefined || cluster.owns(nodeId);
  }

  private track(work: Promise<void>): void {
    const tracked = work.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  /**
   * The hottest path: a healthy node's heartbeat as agents publish it, read in place (no subject
   * string, no decode, no allocation): the payload names the node, the subject must be that
   * node's heartbeat subject (which NATS permissions tie to the sender), one typed-array write.
   * False for anything else, which takes the full path below.
   */
  private agentHeartbeat(msg: Msg): boolean {
    const data = msg.data;
    const span = agentHeartbeatIdSpan(data);
    if (span === -1) return false;
    const from = span >>> 8;
    const length = span & 0xff;
    if (!isHeartbeatSubjectOf(subjectOf(msg), data, from, length) || asksForReply(msg)) return false;
    if (!this.manager.beatIfHealthy(data, from, length)) return false;
    this.options.onHeartbeat?.();
    return true;
  }

  /**
   * The full path, synchronous while the node stays healthy: decode, check the subject's node is
   * the payload's, one typed-array write. No promise, no reply unless the sender asked for one.
   */
  private heartbeat(nodeId: string, msg: Msg): void {
    this.options.onHeartbeat?.();
    let becoming: Promise<void> | undefined;
    try {
      becoming = isAgentHeartbeat(msg.data, nodeId) ? this.beat(nodeId, msg.data) : this.decodedBeat(nodeId, msg.data);
    } catch (e) {
      this.refuseHeartbeat(nodeId, msg, e);
      return;
    }
    // Coming back from UNHEALTHY/UNKNOWN: answered (or refused) once that is stored.
    if (becoming !== undefined) {
      this.track(
        becoming.then(
          () => this.reply(msg, this.acceptedReply()),
          (e: unknown) => this.refuseHeartbeat(nodeId, msg, e),
        ),
      );
    } else if (msg.reply) this.reply(msg, this.acceptedReply());
  }

  /** What agents publish, checked in place: no decoding, no allocation. */
  private beat(nodeId: string, data: Uint8Array): Promise<void> | undefined {
    try {
      return this.manager.heartbeat(nodeId);
    } catch (e) {
      // An unknown id may also be an invalid one: that refusal says so, as for any message.
      decode(HeartbeatRequest, data);
      throw e;
    }
  }

  /** Any other heartbeat (older agents', other encoders'): decoded and validated in full. */
  private decodedBeat(nodeId: string, data: Uint8Array): Promise<void> | undefined {
    const req = decode(HeartbeatRequest, data);
    this.checkSender(nodeId, req.NodeID);
    return this.manager.heartbeat(nodeId, req.MessageID);
  }

  /**
   * A request gets its reply as any other; a published heartbeat's refusal goes to the node's own subject, at most once
   * per interval.
   */
  private refuseHeartbeat(nodeId: string, msg: Msg, e: unknown): void {
    if (this.options.cluster && !this.options.cluster.owns(nodeId)) return;
    if (msg.reply) {
      this.reply(msg, encode(this.refusal(msg.subject, e)));
      return;
    }
    if (!this.refusals.allow(nodeId)) return;
    this.nc.publish(heartbeatRefusedSubject(nodeId), encode(this.refusal(msg.subject, e)));
  }

  private async dispatch(msg: Msg): Promise<ProtocolResponse> {
    const joining = parseJoinSubject(msg.subject);
    if (joining !== undefined) return this.join(joining, msg);
    const route = parseComputeSubject(msg.subject);
    if (!route) throw badRequest(`unknown subject ${msg.subject}`);
    const { nodeId, method } = route;
    switch (method) {
      case "heartbeat":
        throw new Error("heartbeats are handled before dispatch"); // heartbeatNodeId matches every heartbeat subject
      case "info": {
        const req = decode(UpdateInfoRequest, msg.data);
        const context = this.admit(nodeId, req.Info.NodeID, req.MessageID);
        await this.manager.updateInfo(req.Info, context);
        return { Accepted: true, ...this.reconnectSpread() };
      }
      case "resources": {
        const req = decode(UpdateResourcesRequest, msg.data);
        this.admit(nodeId, req.NodeID, req.MessageID);
        this.manager.updateResources(nodeId, req.Resources);
        return { Accepted: true, ...this.reconnectSpread() };
      }
    }
  }

  /** What every accepted reply tells the node about spreading its reconnects (docs/protocol.md, Reconnecting). */
  private reconnectSpread(): { ReconnectSpread?: number } {
    const spreadMs = this.manager.reconnectSpreadMs();
    return spreadMs > 0 ? { ReconnectSpread: spreadMs / 1000 } : {};
  }

  private acceptedReply(): Uint8Array {
    const spreadMs = this.manager.reconnectSpreadMs();
    if (spreadMs !== this.accepted.spreadMs) {
      const reply: ProtocolResponse = { Accepted: true, ...this.reconnectSpread() };
      this.accepted = { spreadMs, bytes: encode(reply) };
    }
    return this.accepted.bytes;
  }

  /** The refusal a failed message gets, logged (rate-limited: a flood of junk must not fill the log). */
  private refusal(subject: string, e: unknown): ProtocolResponse {
    const error = e instanceof ProtocolError ? badRequest(`invalid message: ${e.message}`) : asShoalError(e);
    // Unavailable is a refusal the node retries (a rate limit, store trouble reported elsewhere): a flood must not fill
    // the error log.
    if (error.kind === "Internal")
      this.options.logger.error({ subject, kind: error.kind, reason: error.message }, "compute request refused");
    // Admission counts its own refusals and logs them once per interval.
    else if (!(error instanceof AdmissionRefusal))
      this.refusalLog.warn("compute request refused", error.kind, () => ({ subject, reason: error.message }));
    if (error.kind === "Internal" && !(e instanceof ShoalError))
      this.options.logger.error({ err: e }, "compute request failed");
    return {
      Accepted: false,
      Reason: error.message,
      Code: error.kind,
      ...(error.retryAfterSeconds === undefined ? {} : { RetryAfter: error.retryAfterSeconds }),
    };
  }

  private reply(msg: Msg, data: Uint8Array): void {
    if (msg.reply === undefined || msg.reply === "") return;
    if (!this.mayReplyTo(msg.subject, msg.reply)) {
      const { subject, reply } = msg;
      this.refusalLog.warn("not answering on a reply subject outside the sender's own inbox", "Forbidden", () => ({
        subject,
        reply,
      }));
      return;
    }
    msg.respond(data);
  }

  private async handle(msg: Msg): Promise<void> {
    let response: ProtocolResponse;
    try {
      response = await this.dispatch(msg);
    } catch (e) {
      response = this.refusal(msg.subject, e);
    }
    this.reply(msg, encode(response));
  }

  /** What refusals leave behind, for tests: nodes the heartbeat-refusal limiter remembers, kinds of refusal logged. */
  get refusalState(): { readonly limitedNodes: number; readonly loggedKinds: number } {
    return { limitedNodes: this.refusals.size, loggedKinds: this.refusalLog.size };
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.subscriptions.map((s) => s.drain()));
    await Promise.allSettled([...this.inFlight]);
  }
}
