import { randomUUID } from "node:crypto";
import type { NatsConnection } from "nats";
import type { NodeInfo, ResourceReport } from "../events/catalog/node-info.ts";
import { decode, encode } from "./codec.ts";
import { ProtocolResponse } from "./messages.ts";
import { computeSubject } from "./subjects.ts";

export class OrchestratorUnreachableError extends Error {
  override readonly name = "OrchestratorUnreachableError";
}

/** The compute node's side of the protocol: one request/reply per call, msgpack both ways. */
export class ComputeClient {
  private sequence = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly nodeId: string,
    private readonly token: string,
    private readonly timeoutMs = 5000,
  ) {}

  private async request(method: Parameters<typeof computeSubject>[1], body: Record<string, unknown>): Promise<ProtocolResponse> {
    const message = { MessageID: randomUUID(), ...(this.token === "" ? {} : { Token: this.token }), ...body };
    try {
      const reply = await this.nc.request(computeSubject(this.nodeId, method), encode(message), { timeout: this.timeoutMs });
      return decode(ProtocolResponse, reply.data);
    } catch (e) {
      const code = (e as { code?: string }).code;
      // 503: no orchestrator subscribed; TIMEOUT / CONNECTION_*: NATS or orchestrator down.
      if (code === "503" || code === "TIMEOUT" || code?.startsWith("CONNECTION") || code === "DISCONNECT") {
        throw new OrchestratorUnreachableError(`orchestrator unreachable (${code})`);
      }
      throw e;
    }
  }

  register(info: NodeInfo): Promise<ProtocolResponse> {
    return this.request("register", { Info: info });
  }

  heartbeat(): Promise<ProtocolResponse> {
    this.sequence += 1;
    return this.request("heartbeat", { NodeID: this.nodeId, Sequence: this.sequence });
  }

  updateInfo(info: NodeInfo): Promise<ProtocolResponse> {
    return this.request("info", { Info: info });
  }

  updateResources(report: ResourceReport): Promise<ProtocolResponse> {
    return this.request("resources", { NodeID: this.nodeId, Resources: report });
  }
}
