import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { connect, type ConnectionOptions, type NatsConnection } from "nats";
import type { Logger } from "pino";
import type { NodeInfo } from "../events/catalog/node-info.ts";
import { closeNatsConnection } from "../transport/close-nats-connection.ts";
import { ComputeClient, OrchestratorUnreachableError } from "../transport/compute-client.ts";
import { writeFileAtomic } from "../fs/write-file-atomic.ts";
import { credentialsDir } from "../security/secret-file.ts";
import type { JoinKey } from "../transport/join-proof.ts";
import type { ProtocolResponse } from "../transport/messages.ts";
import { nkeyLogin } from "../transport/nkey-signature.ts";
import { LOGIN_TIMEOUT_SECONDS } from "../transport/nats-auth/nats-server-config.ts";
import { jwtLogin } from "../transport/nats-jwt/jwt-login.ts";
import { joinLogin } from "../transport/nats-jwt/nats-operator.ts";
import { JOIN_INBOX_PREFIX, nodeInboxPrefix } from "../transport/subjects.ts";
import type { CapacityLedger } from "./executor/capacity-ledger.ts";
import type { Executor } from "./executor/executor.ts";
import { ComputeMetrics } from "../metrics/compute-metrics.ts";
import { serveMetrics, type MetricsListen, type MetricsServer } from "../metrics/metrics-server.ts";
import { ExecutionLogServer } from "./execution-log-server.ts";
import { ExecutionRunner } from "./execution-runner.ts";
import { KnownExecutions } from "./known-executions.ts";
import { ExecutionResults } from "./publisher/execution-results.ts";
import { LocalPublisher } from "./publisher/local-publisher.ts";
import { DEFAULT_MAX_RESULT_BYTES } from "../config/default-max-result-bytes.ts";
import { ResultStaging } from "./publisher/result-staging.ts";
import { ResultRetention } from "./publisher/result-retention.ts";
import type { RetentionRule } from "./publisher/results-to-remove.ts";
import { DEFAULT_RESULT_RETENTION } from "../config/default-result-retention.ts";
import { type Clock, systemClock } from "../actors/clock.ts";
import { computeNodeInfo, resourceReport } from "./machine-info.ts";
import { loadOrCreateNodeKey } from "./node-key.ts";
import { RegistrationSentinel } from "./registration-sentinel.ts";
import { reconnectWaitMs } from "../transport/reconnect-spread.ts";
import {
  clientCertificateProblem,
  cutOffBeforeAnswer,
  isPlainServer,
  natsTlsProblem,
  tlsConnectionOptions,
  type NatsClientTls,
} from "../transport/nats-tls.ts";

export interface ComputeAgentOptions {
  readonly nodeId: string;
  readonly orchestrators: readonly string[];
  /** The join token (Compute.Auth.Token): used once, to join; never sent. */
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
  /** Each report is sent up to this much earlier or later than its interval says (0: exactly on time). */
  readonly jitterMs?: number;
  /**
   * The node's key; by default created once and kept under `<dataDir>/credentials` (a fleet simulator keeps its own).
   */
  readonly key?: JoinKey;
  /** Where the node's user JWT is kept; by default beside the key file (a fleet simulator keeps them in memory). */
  readonly jwtStore?: JwtStore;
  /** What the node reports about itself; by default this machine's info (a fleet simulator reports its own). */
  readonly nodeInfo?: () => NodeInfo;
  /** Told every protocol exchange's outcome: for callers that count them (the fleet simulator). */
  readonly observe?: (outcome: AgentOutcome) => void;
  /**
   * Runs the executions the orchestrator sends (docs/protocol.md, Work); its ledger is the
   * capacity the node reports. Without one the node takes no work (a fleet simulator). The agent
   * reconciles it on start and closes it on stop (its containers keep running for the next start).
   */
  readonly executor?: Executor & { readonly ledger: CapacityLedger };
  /**
   * Keep what the node knows of its executions in memory only, not in `<dataDir>/<nodeId>.executions.json`:
   * for an executor whose executions end with the process (a fleet simulator's), where a file written at
   * every change per node would only cost the machine.
   */
  readonly executionsInMemory?: boolean;
  /**
   * Where in the reconnect spread this node's attempts fall, drawn at each disconnect, in [0, 1) (default Math.random).
   */
  readonly reconnectDraw?: () => number;
  /** TLS to the orchestrators' NATS (Compute.TLS.*); absent: TLS only when the server requires it, system CAs. */
  readonly tls?: NatsClientTls;
  /** Where the node serves GET /metrics (Compute.Metrics.*); absent: it serves none. */
  readonly metrics?: MetricsListen;
  /** Compute.Publishers.MaxResultBytes: the most an execution's results may hold (default DEFAULT_MAX_RESULT_BYTES). */
  readonly maxResultBytes?: number;
  /**
   * Compute.Publishers.Local.RetentionPeriod and MaxTotalBytes: how long, and how much of, the local publisher's
   * archives the node keeps (default DEFAULT_RESULT_RETENTION).
   */
  readonly resultRetention?: RetentionRule;
  /** The node's clock for its retention rule (default the system's): a test moves it. */
  readonly clock?: Clock;
}

/**
 * One protocol exchange's outcome: accepted, refused by the orchestrator (with its code), or not
 * delivered (a failed join with what failed: nats.js's code, else the error's name). A published
 * heartbeat is `sent` (no answer comes unless it is refused, later).
 */
export interface AgentOutcome {
  readonly what: "join" | "heartbeat" | "node info" | "resources";
  readonly outcome: "accepted" | "sent" | "refused" | "failed";
  readonly code?: string;
}

/** Keeps the user JWT the orchestrator's nats-server issued the node, across agent restarts. */
export interface JwtStore {
  load(): string | undefined;
  save(jwt: string | undefined): void;
}

/** The JWT in `<dataDir>/credentials/<nodeId>.jwt` (0600), beside the key it goes with. */
function jwtFileStore(dataDir: string, nodeId: string): JwtStore {
  const file = join(credentialsDir(dataDir), `${nodeId}.jwt`);
  return {
    load: () => (existsSync(file) ? readFileSync(file, "utf8").trim() || undefined : undefined),
    save: (jwt) => (jwt === undefined ? rmSync(file, { force: true }) : writeFileAtomic(file, `${jwt}\n`, 0o600)),
  };
}

export class ComputeAgentError extends Error {
  override readonly name = "ComputeAgentError";
}

// A failed connect rejects with a NatsError; the status stream reports the same as a bare code.
const isAuthError = (e: unknown) =>
  (typeof e === "string" ? e : (e as { code?: string } | undefined)?.code) === "AUTHORIZATION_VIOLATION";
// nats-server says this (nats.js has no code for it) when it drops a connection whose JWT was revoked.
const isRevoked = (e: unknown) => /authentication revoked/i.test(e instanceof Error ? e.message : String(e));
/** What an attempt's failure is counted under: nats.js's code (TIMEOUT, AUTHENTICATION_TIMEOUT, …), else its name. */

const failureCode = (e: unknown): string =>
  (e as { code?: unknown } | undefined)?.code?.toString() ?? (e instanceof Error ? e.name : typeof e);

/**
 * How long the agent waits for a login: longer than the orchestrator's nats-server gives one. In a storm logins queue
 * on the server; an agent that gave up sooner would waste the work the server already put into its login and join
 * the back of the same queue again, and the storm with it. Past this the server has answered (Authentication
 * Timeout, at worst) or is not there.
 */
const LOGIN_WAIT_MS = (LOGIN_TIMEOUT_SECONDS + 2) * 1000;

/** How many refusals of the join login in a row mean a wrong token rather than a reload. */
const JOIN_LOGIN_REFUSALS_TO_GIVE_UP = 4;

/**
 * A compute node's agent: joins (retrying with backoff while the orchestrator is down), then
 * heartbeats and reports node info and resources on their intervals, as itself: after joining
 * it speaks only through its own key.
 */
export class ComputeAgent {
  private nc: NatsConnection | undefined;
  private client: ComputeClient | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private registered = false;
  /** NATS refuses our key (rejected or deleted): reports could not be delivered, so none are sent. */
  private refused = false;
  private joinLoginRefusals = 0;
  /** The server turned out to speak no TLS, and the CA found on this machine was only to be used if it did. */
  private plainServer = false;
  private readonly sentinel: RegistrationSentinel;
  private readonly key: JoinKey;
  private wake: (() => void) | undefined;
  /**
   * The user JWT the orchestrator's own nats-server issued this key at join (none on an external
   * NATS: the key logs in alone). Kept (options.jwtStore) so that a restarted agent logs in as
   * itself without joining again.
   */
  private jwt: string | undefined;
  private readonly jwtStore: JwtStore;
  /** A re-join after NATS refused our JWT (revoked), running in the background. */
  private rejoining: Promise<void> | undefined;
  private readonly runner: ExecutionRunner | undefined;
  private readonly logServer: ExecutionLogServer | undefined;
  private readonly results: ExecutionResults | undefined;
  private readonly retention: ResultRetention | undefined;
  private readonly metrics: ComputeMetrics | undefined;
  private metricsServer: MetricsServer | undefined;
  /** The reconnect spread the orchestrator last announced (docs/protocol.md, Reconnecting). */
  private reconnectSpreadMs = 0;
  /** This node's place in that spread, drawn again at each disconnect: the fleet's reconnects land apart. */
  private reconnectDraw: number;

  constructor(private readonly options: ComputeAgentOptions) {
    this.reconnectDraw = (options.reconnectDraw ?? Math.random)();
    this.sentinel = new RegistrationSentinel(options.dataDir, options.nodeId);
    this.key = options.key ?? loadOrCreateNodeKey(options.dataDir, options.nodeId);
    this.jwtStore = options.jwtStore ?? jwtFileStore(options.dataDir, options.nodeId);
    this.jwt = this.jwtStore.load();
    const executor = options.executor;
    this.metrics = options.metrics && new ComputeMetrics(() => executor?.running().length ?? 0);
    if (executor) {
      // Results are files on the node: a node whose executions live in memory (a simulator) publishes none.
      const publisher = options.executionsInMemory ? undefined : new LocalPublisher(join(options.dataDir, "results"));
      const staging = join(options.dataDir, "results", "staging");
      this.results =
        publisher &&
        new ExecutionResults(new ResultStaging(staging, options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES), [
          publisher,
        ]);
      this.retention =
        publisher &&
        new ResultRetention({
          nodeId: options.nodeId,
          dir: publisher.dir,
          rule: options.resultRetention ?? DEFAULT_RESULT_RETENTION,
          clock: options.clock ?? systemClock,
          logger: options.logger.child({ component: "result-retention" }),
        });
      const retention = this.retention;
      this.runner = new ExecutionRunner({
        nodeId: options.nodeId,
        executor,
        known: new KnownExecutions(options.executionsInMemory ? undefined : options.dataDir, options.nodeId),
        // Sent once connected; until then (and while NATS is down) the runner retries.
        send: (report) =>
          this.client
            ? this.client.reportExecution(report)
            : Promise.reject(new OrchestratorUnreachableError("not connected to NATS yet")),
        logger: options.logger,
        ...(this.metrics ? { observer: this.metrics } : {}),
        ...(this.results ? { results: this.results } : {}),
      });
      this.logServer = new ExecutionLogServer({
        nodeId: options.nodeId,
        executor,
        send: (batch) => this.client?.publishLogBatch(batch),
        ...(publisher ? { resultArchive: (id: string) => publisher.pathOf(id) } : {}),
        ...(retention ? { resultRemoved: (id: string) => retention.removedMessage(id) } : {}),
        logger: options.logger.child({ component: "log-server" }),
      });
    }
  }

  private keepJwt(jwt: string | undefined): void {
    this.jwt = jwt;
    this.jwtStore.save(jwt);
  }

  get isRegistered(): boolean {
    return this.registered;
  }

  get publicKey(): string {
    return this.key.publicKey;
  }

  private info(): NodeInfo {
    if (this.options.nodeInfo) return this.options.nodeInfo();
    return computeNodeInfo(
      this.options.nodeId,
      this.options.labels,
      this.options.dataDir,
      this.options.executor?.ledger,
      this.results?.types,
      this.options.executor?.storageSources,
    );
  }

  /** Where the node serves /metrics, once started; undefined when it serves none. */
  get metricsUrl(): string | undefined {
    return this.metricsServer?.url;
  }

  async start(): Promise<void> {
    await this.serveMetrics();
    // Not awaited: a large results directory does not hold up the join.
    void this.retention?.start();
    // Before any work can arrive: adopt what still runs, report what was lost or not yet delivered.
    // An engine that cannot be reached now leaves them for the next start; the node still reports.
    await this.runner
      ?.reconcile()
      .catch((e: unknown) =>
        this.options.logger.error(
          { reason: (e as Error).message },
          "could not reconcile this node's executions with its engine; they are reconciled at the next start",
        ),
      );
    await this.join();
    if (this.stopped) return;
    this.every(this.options.heartbeatMs, () => this.heartbeat());
    this.every(this.options.infoUpdateMs, () => this.sendInfo());
    this.every(this.options.resourceUpdateMs, () => this.sendResources());
    await this.sendResources();
  }

  /** Before the join, so that a node that cannot join shows it on its dashboard too. */
  private async serveMetrics(): Promise<void> {
    const listen = this.options.metrics;
    if (!this.metrics || !listen) return;
    try {
      this.metricsServer = await serveMetrics(this.metrics, listen, this.options.logger);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new ComputeAgentError(
        code === "EADDRINUSE"
          ? `Compute.Metrics.Port ${listen.port} is already in use on ${listen.host}; choose another`
          : `cannot serve /metrics on ${listen.host}:${listen.port} (Compute.Metrics.Host, Compute.Metrics.Port): ` +
              (e as Error).message,
      );
    }
    // The url is how this machine reaches it; host is what it listens on (0.0.0.0: every interface).
    this.options.logger.info(
      { url: this.metricsServer.url, host: listen.host, auth: listen.bearerToken === undefined ? "none" : "bearer" },
      "compute node serving its metrics",
    );
  }

  private every(ms: number, fn: () => Promise<void>): void {
    const jitter = Math.min(this.options.jitterMs ?? 0, ms / 2);
    if (jitter === 0) {
      this.timers.push(setInterval(() => void fn(), ms));
      return;
    }
    // Each tick re-armed with its own offset: nodes started together drift apart instead of reporting in lockstep.
    const slot = this.timers.length;
    const arm = () => {
      this.timers[slot] = setTimeout(
        () => {
          if (this.stopped) return;
          arm();
          void fn();
        },
        ms + (Math.random() * 2 - 1) * jitter,
      );
    };
    arm();
  }

  private refusedFatally(response: ProtocolResponse): never {
    throw new ComputeAgentError(
      `orchestrator refused node ${this.options.nodeId}: ${response.Reason ?? response.Code}`,
    );
  }

  private connectOptions(): ConnectionOptions {
    return {
      servers: [...this.options.orchestrators],
      name: `shoal-compute-${this.options.nodeId}`,
      timeout: LOGIN_WAIT_MS,
      // Every login here may be refused (a key the servers do not know yet, a revoked JWT, a wrong join token). On a
      // first connect nats.js drops each server that refused and gives up once none is left, but each server's INFO
      // adds back the others its cluster gossips: a refused login would go round them forever, silently, and never
      // fall back to the join login or report. So the node knows only Compute.Orchestrators, where it is told to name
      // every server (docs/protocol.md).
      ignoreClusterUpdates: true,
      ...(this.plainServer ? {} : tlsConnectionOptions(this.options.tls)),
    };
  }

  /**
   * nats.js's connect, except that a CA found on this machine (not configured) does not make TLS a must: a server
   * without TLS is then spoken to in plain, as by a node that found no CA.
   */
  private async dial(options: ConnectionOptions): Promise<NatsConnection> {
    try {
      return await connect(options);
    } catch (e) {
      if (this.options.tls?.optional !== true || options.tls === undefined || !isPlainServer(e)) throw e;
      this.plainServer = true;
      const { tls: _, ...plain } = options;
      return connect(plain);
    }
  }

  /** Connects with this node's own key; undefined when NATS does not (or no longer) let it in. */
  private async connectAsNode(): Promise<NatsConnection | undefined> {
    try {
      const nc = await this.dial({
        ...this.connectOptions(),
        // Asked at every (re)connect: a JWT issued meanwhile is used from then on.
        authenticator: (nonce?: string) =>
          (this.jwt === undefined ? nkeyLogin(this.key) : jwtLogin(this.jwt, this.key))(nonce),
        inboxPrefix: nodeInboxPrefix(this.options.nodeId),
        reconnect: true,
        maxReconnectAttempts: -1,
        // The same wait for every attempt of one outage (nats.js asks before each): where in the
        // spread this node's first attempt after the server is back lands is its own draw.
        reconnectDelayHandler: () => reconnectWaitMs(this.reconnectSpreadMs, this.reconnectDraw),
        // A rejected node's key is refused until an operator approves it again: keep trying.
        ignoreAuthErrorAbort: true,
      });
      this.watch(nc);
      return nc;
    } catch (e) {
      if (!isAuthError(e)) throw e;
      // A JWT this server does not take (revoked while the agent was down, another orchestrator,
      // an external NATS): forget it and try the key alone, as on an external NATS.
      if (this.jwt !== undefined) {
        this.keepJwt(undefined);
        return this.connectAsNode();
      }
      return undefined;
    }
  }

  private watch(nc: NatsConnection): void {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === "disconnect") this.reconnectDraw = (this.options.reconnectDraw ?? Math.random)();
        // Heard at once after a reconnect: the orchestrator's grace need not wait for the next tick.
        if (status.type === "reconnect" && !this.refused) void this.heartbeat();
        if (
          status.type === "error" &&
          (isAuthError(status.data) || isRevoked(status.data)) &&
          this.jwt !== undefined &&
          !this.stopped &&
          this.nc === nc
        ) {
          // The orchestrator's own server revoked our JWT (rejected or deleted): only a join can get a new one.
          this.refused = true;
          this.rejoin(nc);
          return;
        }
        if (status.type === "error" && isAuthError(status.data) && !this.refused && !this.stopped) {
          this.refused = true;
          this.options.logger.warn(
            "NATS refuses this node's key (an operator rejected or deleted the node, or the orchestrator is restarting); still trying: an approval lets it back in, a deleted node joins again when its agent restarts",
          );
        }
        if (status.type === "reconnect" && this.refused) {
          this.refused = false;
          this.options.logger.info("NATS lets this node's key in again");
        }
      }
    })().catch((err: unknown) => this.options.logger.warn({ err }, "stopped watching the NATS connection's status"));
  }

  /**
   * Joins again through the join login, with backoff: the orchestrator answers only if the node is
   * still registered (Rejoin) — an approved node gets a fresh JWT, a rejected one is told to wait
   * (Forbidden) and tries again at the slowest pace, a deleted one stays out until its agent restarts.
   */
  private rejoin(revoked: NatsConnection): void {
    if (this.rejoining) return;
    this.options.logger.warn(
      "NATS revoked this node's login (an operator rejected or deleted the node); joining again to learn whether it is still in",
    );
    this.nc = undefined;
    this.client = undefined;
    this.keepJwt(undefined);
    this.rejoining = (async () => {
      await closeNatsConnection(revoked, this.options.logger);
      try {
        await this.join(true);
        if (this.client) this.refused = false;
      } catch (e) {
        this.options.logger.error(
          { reason: (e as Error).message },
          "compute agent cannot join again; it stops reporting",
        );
        this.registered = false;
      } finally {
        this.rejoining = undefined;
      }
    })();
  }

  private adopt(nc: NatsConnection): void {
    // stop() ran while connecting: it had no connection to close yet.
    if (this.stopped) {
      void closeNatsConnection(nc, this.options.logger);
      return;
    }
    this.nc = nc;
    this.client = new ComputeClient(nc, this.options.nodeId);
    this.client.onHeartbeatRefused((refusal) => {
      this.tell("heartbeat", refusal);
      this.refusedReport("heartbeat", refusal);
    });
    const runner = this.runner;
    if (runner) this.client.onWork((data) => runner.handle(data));
    const logServer = this.logServer;
    if (logServer) this.client.onLogRequest((data) => logServer.handle(data));
    this.options.logger.info(
      { nodeId: this.options.nodeId, orchestrators: this.options.orchestrators },
      "compute node connected to NATS",
    );
    // Its logins ignore the servers the cluster gossips (connectOptions): one left out is no place to fail over to.
    const gossiped = nc.info?.connect_urls ?? [];
    if (gossiped.length > this.options.orchestrators.length) {
      this.options.logger.warn(
        { orchestrators: this.options.orchestrators, clusterServers: gossiped },
        "the NATS cluster has more servers than Compute.Orchestrators names: this node fails over only among those",
      );
    }
  }

  /**
   * The orchestrator answers a join only once its nats-server lets the key in, but a server that
   * reloads its users (an external one) may refuse a login meanwhile: try a few times, briefly.
   */
  private async connectAsOwnKeyAfterJoin(): Promise<NatsConnection | undefined> {
    for (let attempt = 0; attempt < 5 && !this.stopped; attempt++) {
      const own = await this.connectAsNode();
      if (own) return own;
      await this.sleep(100 * (attempt + 1));
    }
    return undefined;
  }

  /** Joins through the join token's restricted login, then reconnects as itself when told to. */
  private async joinWithToken(rejoin: boolean): Promise<ProtocolResponse> {
    let nc: NatsConnection;
    try {
      nc = await this.dial({
        ...this.connectOptions(),
        authenticator: joinLogin(this.options.token),
        inboxPrefix: JOIN_INBOX_PREFIX,
        reconnect: false,
      });
    } catch (e) {
      if (!isAuthError(e)) throw e;
      // Refused, not failed: but nats-server 2.9 can refuse a login that arrives while it reloads its users (an
      // external NATS whose operator changes its config), so only a few refusals in a row are taken as the answer.
      if (++this.joinLoginRefusals >= JOIN_LOGIN_REFUSALS_TO_GIVE_UP) {
        throw new ComputeAgentError(
          "the orchestrator's NATS refused the join token: check Compute.Auth.Token (on an external NATS, its operator must add this node's key first: shoal compute --show-key)",
        );
      }
      throw Object.assign(
        new Error(
          "the orchestrator's NATS refused the join login (a reload in progress, or a wrong Compute.Auth.Token)",
        ),
        { code: (e as { code?: string }).code },
      );
    }
    this.joinLoginRefusals = 0;
    try {
      return await new ComputeClient(nc, this.options.nodeId).join(this.info(), this.key, this.options.token, rejoin);
    } finally {
      await nc.close().catch(() => undefined);
    }
  }

  /**
   * On start: with its own key, a node with a sentinel confirms it is still known with a
   * heartbeat; otherwise it joins — over its own connection where NATS lets its key in, else
   * through the join token's login. Only an explicit refusal ends it (ComputeAgentError: a wrong
   * token, a key or request the orchestrator rejects); anything else — nobody answering, a login
   * an overloaded nats-server timed out or turned away, a reply that never came — is retried
   * forever, with capped exponential backoff and full jitter, each retry logged with its attempt
   * and delay.
   */
  private async join(rejoin = false): Promise<void> {
    const { logger } = this.options;
    const maxBackoff = this.options.maxBackoffMs ?? 30_000;
    /** The orchestrator's RetryAfter: it asked for no retry sooner. */
    let notBefore = 0;
    let backoff = this.options.initialBackoffMs ?? 1000;
    for (let attempt = 1; !this.stopped; attempt++) {
      let retry: { readonly message: string; readonly reason: string; readonly code?: string };
      try {
        const response = await this.tryJoin(rejoin);
        if (response === "done") return;
        this.tell("join", response);
        if (rejoin && response.Code === "NotFound") {
          this.refusedReport("join", response);
          return;
        }
        if (response.Code === "Unauthorized" || response.Code === "BadRequest" || response.Code === "Conflict")
          this.refusedFatally(response);
        // Forbidden waits for an operator (a rejected node may be approved, a full queue of PENDING
        // nodes drained): keep trying, at the slowest pace. Unavailable (too many nodes joining
        // at once, store trouble) waits at least as long as the orchestrator asked.
        if (response.Code === "Forbidden") backoff = maxBackoff;
        notBefore = (response.RetryAfter ?? 0) * 1000;
        retry = {
          message: "join refused; will retry",
          reason: response.Reason ?? "",
          ...(response.Code === undefined ? {} : { code: response.Code }),
        };
      } catch (e) {
        if (e instanceof ComputeAgentError) throw e;
        // A certificate this node does not trust (or TLS one side lacks) stays so until an operator changes config.
        const tlsProblem = natsTlsProblem(e, this.options.orchestrators.join(", "), this.options.tls);
        if (tlsProblem !== undefined) throw new ComputeAgentError(tlsProblem);
        // A server that wants a client certificate only resets the connection: its INFO says so, once nothing answered.
        if (this.nc === undefined && cutOffBeforeAnswer(e)) {
          const certProblem = await clientCertificateProblem(this.options.orchestrators, this.options.tls);
          if (certProblem !== undefined) throw new ComputeAgentError(certProblem);
        }
        const code = failureCode(e);
        this.options.observe?.({ what: "join", outcome: "failed", code });
        retry = { message: "could not join yet; will retry", reason: (e as Error)?.message ?? String(e), code };
      }
      // Full jitter: nodes turned away together (a rate limit, an overloaded server, an orchestrator restart) spread
      // over the whole window instead of coming back together.
      const retryInMs = Math.max(Math.round(Math.random() * backoff), notBefore);
      logger.warn({ ...retry, attempt, backoffMs: backoff, retryInMs }, retry.message);
      await this.sleep(retryInMs);
      notBefore = 0;
      backoff = Math.min(backoff * 2, maxBackoff);
    }
  }

  /** One attempt: "done" (joined, confirmed by its sentinel, or stopped meanwhile) or the refusal; throws failures. */
  private async tryJoin(rejoin: boolean): Promise<ProtocolResponse | "done"> {
    const { logger } = this.options;
    if (!this.nc) {
      const own = await this.connectAsNode();
      if (own) this.adopt(own);
      if (this.stopped) return "done";
    }
    if (this.client && this.sentinel.exists()) {
      // Answered, unlike the heartbeats that follow: whether to join again depends on it.
      const hb = await this.client.heartbeatRequest();
      this.tell("heartbeat", hb);
      if (hb.Accepted) {
        this.registered = true;
        logger.info("registration still valid (sentinel present); not registering again");
        await this.sendInfo();
        return "done";
      }
      logger.info({ reason: hb.Reason }, "orchestrator no longer knows this node; joining again");
      this.sentinel.remove();
    }
    const response = this.client
      ? await this.client.join(this.info(), this.key, this.options.token, rejoin)
      : await this.joinWithToken(rejoin);
    if (!response.Accepted) return response;
    if (response.UserJWT !== undefined) this.keepJwt(response.UserJWT);
    if (!this.client) {
      const own = await this.connectAsOwnKeyAfterJoin();
      // Still refused (reloads keep coming): the next round finds it let in, or joins again, idempotently.
      if (!own) throw new Error("joined, but NATS did not let this node's key in yet");
      this.adopt(own);
      if (this.stopped) return "done";
    }
    this.registered = true;
    this.tell("join", response);
    this.sentinel.write({
      NodeID: this.options.nodeId,
      PublicKey: this.key.publicKey,
      RegisteredAt: new Date().toISOString(),
      Orchestrators: this.options.orchestrators,
    });
    logger.info({ reason: response.Reason, publicKey: this.key.publicKey }, "joined the cluster");
    return "done";
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

  private tell(what: AgentOutcome["what"], response: ProtocolResponse): void {
    if (response.Accepted) this.reconnectSpreadMs = Math.round((response.ReconnectSpread ?? 0) * 1000);
    const observe = this.options.observe;
    if (!observe) return;
    if (response.Accepted) observe({ what, outcome: "accepted" });
    else observe({ what, outcome: "refused", ...(response.Code === undefined ? {} : { code: response.Code }) });
  }

  /** Whether reports go out: joined, not stopped, let in by NATS, and not removed by an operator since. */
  private get reporting(): boolean {
    return !this.stopped && this.client !== undefined && !this.refused && this.registered;
  }

  /** A refused report, answered or (a heartbeat's) sent to this node's own subject. */
  private refusedReport(what: AgentOutcome["what"], response: ProtocolResponse): void {
    if (response.Code === "NotFound") {
      // Deleted by an operator: stay out until this agent is restarted (which registers anew).
      if (this.registered)
        this.options.logger.warn(
          { reason: response.Reason },
          "orchestrator has removed this node; restart the agent to register again",
        );
      this.registered = false;
      this.sentinel.remove();
      return;
    }
    this.options.logger.warn({ what, reason: response.Reason, code: response.Code }, "orchestrator refused report");
  }

  private async send(what: AgentOutcome["what"], call: () => Promise<ProtocolResponse>): Promise<void> {
    if (!this.reporting) return;
    try {
      const response = await call();
      this.tell(what, response);
      if (!response.Accepted) this.refusedReport(what, response);
    } catch (e) {
      if (this.stopped) return;
      this.options.observe?.({ what, outcome: "failed" });
      this.options.logger.warn({ what, reason: (e as Error).message }, "report not delivered");
    }
  }

  /**
   * Published, as Bacalhau ≥ 1.6 does: nothing waits for an answer. An orchestrator that falls
   * silent is still noticed: node info and resources stay requests ("report not delivered").
   */
  private heartbeat(): Promise<void> {
    if (!this.reporting) return Promise.resolve();
    try {
      this.client!.heartbeat();
      this.options.observe?.({ what: "heartbeat", outcome: "sent" });
    } catch (e) {
      this.options.observe?.({ what: "heartbeat", outcome: "failed" });
      this.options.logger.warn({ what: "heartbeat", reason: (e as Error).message }, "report not delivered");
    }
    return Promise.resolve();
  }

  private sendInfo(): Promise<void> {
    return this.send("node info", () => this.client!.updateInfo(this.info()));
  }

  private sendResources(): Promise<void> {
    return this.send("resources", () =>
      this.client!.updateResources(resourceReport(this.info(), this.options.executor?.ledger)),
    );
  }

  /** Bounded even when NATS is wedged: the drain is given up after a short wait and the socket closed. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    for (const t of this.timers) clearTimeout(t);
    this.runner?.stop();
    this.logServer?.stop();
    this.retention?.stop();
    await this.metricsServer?.close();
    // Containers keep running: the next start adopts them.
    await this.options.executor?.close();
    if (this.nc) await closeNatsConnection(this.nc, this.options.logger);
  }
}
