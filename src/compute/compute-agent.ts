import { connect, type NatsConnection } from "nats";
import type { Logger } from "pino";
import type { NodeInfo } from "../events/catalog/node-info.ts";
import { ComputeClient, OrchestratorUnreachableError } from "../transport/compute-client.ts";
import type { ProtocolResponse } from "../transport/messages.ts";
import { computeNodeInfo, resourceReport } from "./machine-info.ts";
import { RegistrationSentinel } from "./registration-sentinel.ts";

export interface ComputeAgentOptions {
  readonly nodeId: string;
  readonly orchestrators: readonly string[];
  readonly token: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly dataDir: string;
  readonly heartbeatMs: number;
  readonly infoUpdateMs: number;
  readonly resourceUpdateMs: number;
  readonly logger: Logger;
  /** Registration retry backoff: starts here, doubles, capped at maxBackoffMs. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

export class ComputeAgentError extends Error {
  override readonly name = "ComputeAgentError";
}

/**
 * A compute node's agent: registers (retrying with backoff while the orchestrator is down),
 * then heartbeats and reports node info and resources on their intervals.
 */
export class ComputeAgent {
  private nc: NatsConnection | undefined;
  private client: ComputeClient | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private registered = false;
  private readonly sentinel: RegistrationSentinel;
  private wake: (() => void) | undefined;

  constructor(private readonly options: ComputeAgentOptions) {
    this.sentinel = new RegistrationSentinel(options.dataDir, options.nodeId);
  }

  get isRegistered(): boolean {
    return this.registered;
  }

  private info(): NodeInfo {
    return computeNodeInfo(this.options.nodeId, this.options.labels, this.options.dataDir);
  }

  async start(): Promise<void> {
    const { logger, orchestrators, nodeId } = this.options;
    this.nc = await connect({
      servers: [...orchestrators],
      name: `shoal-compute-${nodeId}`,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      waitOnFirstConnect: true,
    });
    this.client = new ComputeClient(this.nc, nodeId, this.options.token);
    logger.info({ nodeId, orchestrators }, "compute node connected to NATS");
    await this.join();
    this.every(this.options.heartbeatMs, () => this.heartbeat());
    this.every(this.options.infoUpdateMs, () => this.sendInfo());
    this.every(this.options.resourceUpdateMs, () => this.sendResources());
    await this.sendResources();
  }

  private every(ms: number, fn: () => Promise<void>): void {
    const t = setInterval(() => void fn(), ms);
    this.timers.push(t);
  }

  private refusedFatally(response: ProtocolResponse): never {
    throw new ComputeAgentError(`orchestrator refused node ${this.options.nodeId}: ${response.Reason ?? response.Code}`);
  }

  /**
   * On start: a node with a sentinel confirms it is still known with a heartbeat; otherwise (or if
   * the orchestrator has deleted it) it registers, retrying with backoff while nobody answers.
   */
  private async join(): Promise<void> {
    const { logger } = this.options;
    const maxBackoff = this.options.maxBackoffMs ?? 30_000;
    let backoff = this.options.initialBackoffMs ?? 1000;
    while (!this.stopped) {
      try {
        if (this.sentinel.exists()) {
          const hb = await this.client!.heartbeat();
          if (hb.Accepted) {
            this.registered = true;
            logger.info("registration still valid (sentinel present); not registering again");
            await this.sendInfo();
            return;
          }
          if (hb.Code === "Unauthorized") this.refusedFatally(hb);
          logger.info({ reason: hb.Reason }, "orchestrator no longer knows this node; registering again");
          this.sentinel.remove();
        }
        const response = await this.client!.register(this.info());
        if (response.Accepted) {
          this.registered = true;
          this.sentinel.write({ NodeID: this.options.nodeId, RegisteredAt: new Date().toISOString(), Orchestrators: this.options.orchestrators });
          logger.info({ reason: response.Reason }, "registered with the orchestrator");
          return;
        }
        if (response.Code === "Unauthorized" || response.Code === "BadRequest") this.refusedFatally(response);
        // Forbidden waits for an operator (a rejected node may be approved, a full queue of PENDING
        // nodes drained): keep trying, at the slowest pace. Unavailable (too many nodes registering
        // at once, store trouble) and the rest back off from where they are.
        if (response.Code === "Forbidden") backoff = maxBackoff;
        logger.warn({ reason: response.Reason, code: response.Code, retryInMs: backoff }, "registration refused; will retry");
      } catch (e) {
        if (!(e instanceof OrchestratorUnreachableError)) throw e;
        logger.warn({ reason: e.message, retryInMs: backoff }, "orchestrator not reachable; will retry registration");
      }
      // Jitter: nodes refused together (a rate limit, an orchestrator restart) must not retry together.
      await this.sleep(backoff * (0.5 + Math.random() / 2));
      backoff = Math.min(backoff * 2, maxBackoff);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private async send(what: string, call: () => Promise<ProtocolResponse>): Promise<void> {
    if (this.stopped || !this.client) return;
    try {
      const response = await call();
      if (response.Accepted) return;
      if (response.Code === "NotFound") {
        // Deleted by an operator: stay out until this agent is restarted (which registers anew).
        if (this.registered) this.options.logger.warn({ reason: response.Reason }, "orchestrator has removed this node; restart the agent to register again");
        this.registered = false;
        this.sentinel.remove();
        return;
      }
      this.options.logger.warn({ what, reason: response.Reason, code: response.Code }, "orchestrator refused report");
    } catch (e) {
      if (this.stopped) return;
      this.options.logger.warn({ what, reason: (e as Error).message }, "report not delivered");
    }
  }

  private heartbeat(): Promise<void> {
    return this.send("heartbeat", () => this.client!.heartbeat());
  }

  private sendInfo(): Promise<void> {
    return this.send("node info", () => this.client!.updateInfo(this.info()));
  }

  private sendResources(): Promise<void> {
    return this.send("resources", () => this.client!.updateResources(resourceReport(this.info())));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    for (const t of this.timers) clearInterval(t);
    await this.nc?.drain().catch(() => undefined);
  }
}
