import type { Msg, NatsConnection, Subscription } from "nats";
import type { Logger } from "pino";
import { ShoalError, asShoalError, badRequest, unauthorized } from "../errors/shoal-error.ts";
import { ProtocolError, decode, encode } from "../transport/codec.ts";
import { verifyJoinProof, verifyJoinSignature } from "../transport/join-proof.ts";
import { HeartbeatRequest, JoinRequest, UpdateInfoRequest, UpdateResourcesRequest, type ProtocolResponse } from "../transport/messages.ts";
import {
  JOIN_INBOX_PREFIX,
  JOIN_SUBSCRIPTION,
  ORCHESTRATOR_QUEUE,
  ORCHESTRATOR_SUBSCRIPTION,
  nodeInboxPrefix,
  parseComputeSubject,
  parseJoinSubject,
} from "../transport/subjects.ts";
import { commandContext } from "./command-context.ts";
import type { NodeManager } from "./node-manager.ts";

export interface NodeProtocolOptions {
  /** The join token (Orchestrator.Auth.Token, or the one generated under DataDir). */
  readonly joinToken: string;
  /** The nats-server enforces per-node keys: a node must reconnect with its own key after joining. */
  readonly enforcesNodeKeys: boolean;
  readonly logger: Logger;
  /** Counts each heartbeat message that arrives (the metrics). */
  readonly onHeartbeat?: () => void;
}

/**
 * The orchestrator's side of the compute protocol: validates every message (subject, schema,
 * join proof) before anything reaches a node actor, and answers each request.
 */
export class NodeProtocolHandler {
  private readonly subscriptions: Subscription[] = [];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly manager: NodeManager,
    private readonly options: NodeProtocolOptions,
  ) {}

  start(): void {
    for (const subject of [JOIN_SUBSCRIPTION, ORCHESTRATOR_SUBSCRIPTION]) {
      this.subscriptions.push(
        this.nc.subscribe(subject, {
          queue: ORCHESTRATOR_QUEUE,
          callback: (err, msg) => {
            if (err) {
              this.options.logger.error({ err }, "compute protocol subscription error");
              return;
            }
            const work = this.handle(msg).finally(() => this.inFlight.delete(work));
            this.inFlight.add(work);
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
    if (joining !== undefined && reply.startsWith(`${JOIN_INBOX_PREFIX}.`)) return true;
    return !this.options.enforcesNodeKeys && reply.startsWith("_INBOX.");
  }

  /** A message may only speak for the node its subject names (which NATS permissions tie to the sender). */
  private admit(nodeId: string, claimed: string, messageId: string) {
    if (claimed !== nodeId) throw badRequest(`subject is for node ${nodeId} but the message is from ${claimed}`);
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
    const result = await this.manager.join(req.Info, req.PublicKey, { ...context, reason: "joined with the join token" });
    return { Accepted: true, Reason: result.note ?? "node registered", Reconnect: this.options.enforcesNodeKeys };
  }

  private async dispatch(msg: Msg): Promise<ProtocolResponse> {
    const joining = parseJoinSubject(msg.subject);
    if (joining !== undefined) return this.join(joining, msg);
    const route = parseComputeSubject(msg.subject);
    if (!route) throw badRequest(`unknown subject ${msg.subject}`);
    const { nodeId, method } = route;
    switch (method) {
      case "heartbeat": {
        this.options.onHeartbeat?.();
        const req = decode(HeartbeatRequest, msg.data);
        this.admit(nodeId, req.NodeID, req.MessageID);
        await this.manager.heartbeat(nodeId, req.MessageID);
        return { Accepted: true };
      }
      case "info": {
        const req = decode(UpdateInfoRequest, msg.data);
        const context = this.admit(nodeId, req.Info.NodeID, req.MessageID);
        await this.manager.updateInfo(req.Info, context);
        return { Accepted: true };
      }
      case "resources": {
        const req = decode(UpdateResourcesRequest, msg.data);
        this.admit(nodeId, req.NodeID, req.MessageID);
        this.manager.updateResources(nodeId, req.Resources);
        return { Accepted: true };
      }
    }
  }

  private async handle(msg: Msg): Promise<void> {
    let response: ProtocolResponse;
    try {
      response = await this.dispatch(msg);
    } catch (e) {
      const error = e instanceof ProtocolError ? badRequest(`invalid message: ${e.message}`) : asShoalError(e);
      // Unavailable is a refusal the node retries (a rate limit, store trouble reported elsewhere): a flood must not fill the error log.
      const level = error.kind === "Internal" ? "error" : "warn";
      this.options.logger[level]({ subject: msg.subject, kind: error.kind, reason: error.message }, "compute request refused");
      response = {
        Accepted: false,
        Reason: error.message,
        Code: error.kind,
        ...(error.retryAfterSeconds === undefined ? {} : { RetryAfter: error.retryAfterSeconds }),
      };
      if (error.kind === "Internal" && !(e instanceof ShoalError)) this.options.logger.error({ err: e }, "compute request failed");
    }
    if (msg.reply === undefined || msg.reply === "") return;
    if (!this.mayReplyTo(msg.subject, msg.reply)) {
      this.options.logger.warn({ subject: msg.subject, reply: msg.reply }, "not answering on a reply subject outside the sender's own inbox");
      return;
    }
    msg.respond(encode(response));
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.subscriptions.map((s) => s.drain()));
    await Promise.allSettled([...this.inFlight]);
  }
}
