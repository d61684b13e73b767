import { randomUUID } from "node:crypto";
import type { NatsConnection } from "nats";
import type { NodeInfo, ResourceReport } from "../events/catalog/node-info.ts";
import { decode, encode } from "./codec.ts";
import { joinProof, signJoin, type JoinKey } from "./join-proof.ts";
import { ProtocolResponse } from "./messages.ts";
import { isUnreachable } from "./unreachable.ts";
import { computeSubject, joinSubject, type ProtocolMethod } from "./subjects.ts";

export class OrchestratorUnreachableError extends Error {
  override readonly name = "OrchestratorUnreachableError";
}

/** The compute node's side of the protocol: one request/reply per call, msgpack both ways. */
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
  join(info: NodeInfo, key: JoinKey, joinToken: string): Promise<ProtocolResponse> {
    const messageId = randomUUID();
    return this.request(joinSubject(this.nodeId), {
      MessageID: messageId,
      Info: info,
      PublicKey: key.publicKey,
      Proof: joinProof(joinToken, this.nodeId, key.publicKey, messageId),
      Signature: signJoin(key, this.nodeId, messageId),
    });
  }

  heartbeat(): Promise<ProtocolResponse> {
    this.sequence += 1;
    return this.call("heartbeat", { NodeID: this.nodeId, Sequence: this.sequence });
  }

  updateInfo(info: NodeInfo): Promise<ProtocolResponse> {
    return this.call("info", { Info: info });
  }

  updateResources(report: ResourceReport): Promise<ProtocolResponse> {
    return this.call("resources", { NodeID: this.nodeId, Resources: report });
  }
}
