import { createHash, timingSafeEqual } from "node:crypto";
import type { Msg, NatsConnection, Subscription } from "nats";
import type { Logger } from "pino";
import { ShoalError, asShoalError, badRequest, unauthorized } from "../errors/shoal-error.ts";
import { ProtocolError, decode, encode } from "../transport/codec.ts";
import { HeartbeatRequest, RegisterRequest, UpdateInfoRequest, UpdateResourcesRequest, type ProtocolResponse } from "../transport/messages.ts";
import { ORCHESTRATOR_QUEUE, ORCHESTRATOR_SUBSCRIPTION, parseComputeSubject } from "../transport/subjects.ts";
import { commandContext } from "./command-context.ts";
import type { NodeManager } from "./node-manager.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * The orchestrator's side of the compute protocol: validates every message (subject, schema,
 * token) before anything reaches a node actor, and answers each request.
 */
export class NodeProtocolHandler {
  private subscription: Subscription | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly manager: NodeManager,
    private readonly options: { readonly token: string; readonly logger: Logger },
  ) {}

  start(): void {
    this.subscription = this.nc.subscribe(ORCHESTRATOR_SUBSCRIPTION, {
      queue: ORCHESTRATOR_QUEUE,
      callback: (err, msg) => {
        if (err) {
          this.options.logger.error({ err }, "compute protocol subscription error");
          return;
        }
        const work = this.handle(msg).finally(() => this.inFlight.delete(work));
        this.inFlight.add(work);
      },
    });
  }

  private checkToken(token: string | undefined): void {
    if (this.options.token === "") return;
    if (token === undefined || !timingSafeEqual(digest(token), digest(this.options.token))) {
      throw unauthorized("invalid or missing Compute.Auth.Token");
    }
  }

  /** Token first, then identity: a message may only speak for the node its subject names. */
  private admit(nodeId: string, claimed: string, token: string | undefined, messageId: string) {
    this.checkToken(token);
    if (claimed !== nodeId) throw badRequest(`subject is for node ${nodeId} but the message is from ${claimed}`);
    return commandContext({ type: "node", id: nodeId }, { causationId: messageId });
  }

  private async dispatch(msg: Msg): Promise<ProtocolResponse> {
    const route = parseComputeSubject(msg.subject);
    if (!route) throw badRequest(`unknown subject ${msg.subject}`);
    const { nodeId, method } = route;
    switch (method) {
      case "register": {
        const req = decode(RegisterRequest, msg.data);
        const context = this.admit(nodeId, req.Info.NodeID, req.Token, req.MessageID);
        if (req.Info.NodeType !== "Compute") throw badRequest("node is not a compute node");
        const result = await this.manager.register(req.Info, context);
        return { Accepted: true, Reason: result.note ?? "node registered" };
      }
      case "heartbeat": {
        const req = decode(HeartbeatRequest, msg.data);
        this.admit(nodeId, req.NodeID, req.Token, req.MessageID);
        await this.manager.heartbeat(nodeId, req.MessageID);
        return { Accepted: true };
      }
      case "info": {
        const req = decode(UpdateInfoRequest, msg.data);
        const context = this.admit(nodeId, req.Info.NodeID, req.Token, req.MessageID);
        await this.manager.updateInfo(req.Info, context);
        return { Accepted: true };
      }
      case "resources": {
        const req = decode(UpdateResourcesRequest, msg.data);
        this.admit(nodeId, req.NodeID, req.Token, req.MessageID);
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
      const level = error.kind === "Internal" || error.kind === "Unavailable" ? "error" : "warn";
      this.options.logger[level]({ subject: msg.subject, kind: error.kind, reason: error.message }, "compute request refused");
      response = {
        Accepted: false,
        Reason: error.message,
        Code: error.kind,
        ...(error.retryAfterSeconds === undefined ? {} : { RetryAfter: error.retryAfterSeconds }),
      };
      if (error.kind === "Internal" && !(e instanceof ShoalError)) this.options.logger.error({ err: e }, "compute request failed");
    }
    if (msg.reply) msg.respond(encode(response));
  }

  async stop(): Promise<void> {
    await this.subscription?.drain();
    await Promise.allSettled([...this.inFlight]);
  }
}
