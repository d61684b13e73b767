import { randomUUID } from "node:crypto";
import type { NatsConnection, Subscription } from "nats";
import type { NodeInfo, ResourceReport } from "../events/catalog/node-info.ts";
import { decode, encode } from "./codec.ts";
import { joinProof, signJoin, type JoinKey } from "./join-proof.ts";
import { ProtocolResponse } from "./messages.ts";
import { isUnreachable } from "./unreachable.ts";
import { computeSubject, heartbeatRefusedSubject, joinSubject, type ProtocolMethod } from "./subjects.ts";

export class OrchestratorUnreachableError extends Error {
  override readonly name = "OrchestratorUnreachableError";
}

/**
 * The compute node's side of the protocol, msgpack both ways: heartbeats are published (no
 * reply; a refusal arrives on the node's own subject), every other call is one request/reply.
 */
export class ComputeClient {
  private sequence = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly nodeId: string,
    private readonly timeoutMs = 5000,
  ) {}

  private async request(subject: string, body: Record<string, unknown>): Promise<ProtocolResponse> {
    try {
      const reply = await this.nc.request(subject, encode(body), { timeout: this.timeoutMs });
      return decode(ProtocolResponse, reply.data);
    } catch (e) {
      // 503: no orchestrator subscribed; the rest: NATS or the orchestrator down.
      if (isUnreachable(e)) throw new OrchestratorUnreachableError(`orchestrator unreachable (${(e as { code?: string }).code})`);
      throw e;
    }
  }

  private call(method: ProtocolMethod, body: Record<string, unknown>): Promise<ProtocolResponse> {
    return this.request(computeSubject(this.nodeId, method), { MessageID: randomUUID(), ...body });
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
    return this.call("heartbeat", { NodeID: this.nodeId, Sequence: this.sequence });
  }

  /** Refusals of published heartbeats (the orchestrator's reply, on the node's own subject); undecodable ones are dropped. */
  onHeartbeatRefused(handle: (refusal: ProtocolResponse) => void): Subscription {
    return this.nc.subscribe(heartbeatRefusedSubject(this.nodeId), {
      callback: (err, msg) => {
        if (err) return;
        let refusal: ProtocolResponse;
        try {
          refusal = decode(ProtocolResponse, msg.data);
        } catch {
          return;
        }
        if (!refusal.Accepted) handle(refusal);
      },
    });
  }

  updateInfo(info: NodeInfo): Promise<ProtocolResponse> {
    return this.call("info", { Info: info });
  }

  updateResources(report: ResourceReport): Promise<ProtocolResponse> {
    return this.call("resources", { NodeID: this.nodeId, Resources: report });
  }
}
