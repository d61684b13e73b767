import type { Logger } from "pino";
import type { NodeCommand } from "../../machines/node/node-commands.ts";
import { activeCredential, isRegistered, nodeHealth } from "../../machines/node/node-machine.ts";
import { decodeNodeEvent } from "../events/catalog/node-event-codec.ts";
import type { Health, NodeInfo, ResourceReport } from "../events/catalog/node-info.ts";
import type { EventStore } from "../events/store/event-store.ts";
import { NODE_CATEGORY, categoryOf, entityIdOf } from "../events/streams.ts";
import { forbidden, notFound, unavailable } from "../errors/shoal-error.ts";
import type { Clock, TimerHandle } from "./clock.ts";
import { systemContext, type CommandContext } from "./command-context.ts";
import type { HealthThresholds } from "./health-thresholds.ts";
import { NodeActor, type CommandResult } from "./node-actor.ts";
import { RegistrationAdmission, type RegistrationLimits } from "./registration-admission.ts";
import { resolveNodeId } from "./resolve-node-id.ts";

/** In-memory, never persisted: Bacalhau treats heartbeats and resource reports as transient. */
interface Liveness {
  /** Last heartbeat received by this orchestrator process; null when none since it started. */
  lastHeartbeat: number | null;
  /** When this process started watching the node (registration or recovery). */
  since: number;
  /** No health transition before this instant: the restart grace (Bacalhau #4585). */
  graceUntil: number;
  /** A healthy node's silence counts from no earlier than this: when our own transport came back (0: never). */
  transportBackAt: number;
  health: Health;
  /** A health transition is being written; a heartbeat now must re-check afterwards. */
  changing: boolean;
  timer: TimerHandle | undefined;
  resources: ResourceReport | undefined;
}

export interface LiveView {
  readonly lastHeartbeat: number | null;
  readonly resources: ResourceReport | undefined;
}

/** Whatever lets a node's key in (the orchestrator's nats-server); resolves once it is enforced. */
export interface CredentialGate {
  apply(nodeId: string, publicKey: string | undefined): Promise<void>;
}

export interface NodeManagerOptions {
  readonly store: EventStore;
  readonly credentials?: CredentialGate;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly manualApproval: boolean;
  readonly thresholds: HealthThresholds;
  /** Caps on new registrations; absent: none (the orchestrator always passes its config). */
  readonly registrationLimits?: RegistrationLimits;
}

const NO_REGISTRATION_LIMITS: RegistrationLimits = { maxRegistrationsPerSecond: 0, registrationBurst: 0, maxPendingNodes: 0 };

const RECOVERY_BATCH = 1000;
/** A long replay says where it is this often (wall time: a log concern, not the domain clock). */
const RECOVERY_LOG_INTERVAL_MS = 1000;
const RETRY_AFTER_STORE_ERROR_MS = 5000;

/**
 * The orchestrator's node actors: one per node, rebuilt from the store on start. Holds the
 * transient liveness state and turns missed deadlines into health commands.
 */
export class NodeManager {
  private readonly actors = new Map<string, NodeActor>();
  private readonly liveness = new Map<string, Liveness>();
  private stopped = false;
  /** Why the orchestrator's own transport is down, or undefined while it is up: silence then is ours, not the nodes'. */
  private transportDownReason: string | undefined;
  private readonly admission: RegistrationAdmission;
  /** New registrations under way per node id; their actor is dropped again if none of them is stored. */
  private readonly creating = new Map<string, number>();

  constructor(private readonly options: NodeManagerOptions) {
    this.admission = new RegistrationAdmission(options.registrationLimits ?? NO_REGISTRATION_LIMITS, options.clock);
  }

  private get clock(): Clock {
    return this.options.clock;
  }

  private actor(nodeId: string): NodeActor {
    let actor = this.actors.get(nodeId);
    if (!actor) {
      actor = new NodeActor(nodeId, this.options.store, this.clock);
      this.actors.set(nodeId, actor);
    }
    return actor;
  }

  /** Replays every node stream, then arms health deadlines with a full grace period. */
  async recover(): Promise<{ nodes: number; events: number; position: number }> {
    const { store, logger } = this.options;
    const started = this.clock.now();
    const lastSeenInEvents = new Map<string, string | null>();
    let after = 0;
    let count = 0;
    let logged = { at: performance.now(), count: 0 };
    for (;;) {
      const batch = await store.readAll({ after, maxCount: RECOVERY_BATCH });
      for (const recorded of batch) {
        after = recorded.position;
        if (categoryOf(recorded.stream) !== NODE_CATEGORY) continue;
        const event = decodeNodeEvent(recorded);
        const nodeId = entityIdOf(recorded.stream);
        this.actor(nodeId).applyStored(event, recorded.revision);
        if (event.type === "NodeBecameUnhealthy" || event.type === "NodeBecameUnknown") lastSeenInEvents.set(nodeId, event.data.LastHeartbeat);
        count++;
      }
      const at = performance.now();
      if (batch.length > 0 && at - logged.at >= RECOVERY_LOG_INTERVAL_MS) {
        const eventsPerSecond = Math.round(((count - logged.count) * 1000) / (at - logged.at));
        logger.info({ events: count, position: after, eventsPerSecond }, "recovering nodes: replayed events");
        logged = { at, count };
      }
      if (batch.length < RECOVERY_BATCH) break;
    }
    const now = this.clock.now();
    for (const [nodeId, actor] of this.actors) {
      const state = actor.state;
      if (!isRegistered(state) || state.context.nodeType !== "Compute") continue;
      const seen = lastSeenInEvents.get(nodeId);
      const health = nodeHealth(state) ?? "HEALTHY";
      const thresholds = this.thresholdsOf(nodeId);
      this.liveness.set(nodeId, {
        lastHeartbeat: health !== "HEALTHY" && typeof seen === "string" ? Date.parse(seen) : null,
        since: now,
        graceUntil: now + thresholds.disconnectMs,
        transportBackAt: 0,
        health,
        changing: false,
        timer: undefined,
        resources: undefined,
      });
      this.arm(nodeId);
    }
    logger.info({ nodes: this.actors.size, events: count, ms: this.clock.now() - started }, "recovered nodes from the event store");
    return { nodes: this.actors.size, events: count, position: after };
  }

  private thresholdsOf(nodeId: string) {
    return this.options.thresholds.for(nodeId, this.actors.get(nodeId)?.state.context.info?.Labels ?? {});
  }

  /** The next instant at which the node's health must be re-checked, or undefined for none. */
  private deadline(nodeId: string, live: Liveness): number | undefined {
    const t = this.thresholdsOf(nodeId);
    const base = Math.max(live.lastHeartbeat ?? live.since, live.transportBackAt);
    if (live.health === "HEALTHY") return Math.max(base + t.disconnectMs, live.graceUntil);
    if (live.health === "UNHEALTHY") return Math.max(base + t.unknownMs, live.graceUntil);
    return undefined;
  }

  private arm(nodeId: string): void {
    const live = this.liveness.get(nodeId);
    if (!live || this.stopped) return;
    live.timer?.cancel();
    live.timer = undefined;
    const at = this.deadline(nodeId, live);
    if (at === undefined) return;
    live.timer = this.clock.setTimer(at - this.clock.now(), () => {
      live.timer = undefined;
      void this.onDeadline(nodeId);
    });
  }

  private async onDeadline(nodeId: string): Promise<void> {
    const live = this.liveness.get(nodeId);
    if (!live || this.stopped) return;
    // No health change is written while our own transport is down; transportUp() re-arms every node.
    if (this.transportDownReason !== undefined) return;
    const due = () => {
      const at = this.deadline(nodeId, live);
      return this.transportDownReason === undefined && at !== undefined && this.clock.now() >= at;
    };
    // Heartbeats only move lastHeartbeat; the timer notices here and re-arms (lazy deadlines).
    if (!due()) return this.arm(nodeId);
    const t = this.thresholdsOf(nodeId);
    const lastHeartbeat = live.lastHeartbeat === null ? null : new Date(live.lastHeartbeat).toISOString();
    const command: NodeCommand =
      live.health === "HEALTHY"
        ? { type: "MarkUnhealthy", lastHeartbeat, disconnectTimeoutMs: t.disconnectMs }
        : { type: "MarkUnknown", lastHeartbeat, unknownTimeoutMs: t.unknownMs };
    const silentMs = this.clock.now() - (live.lastHeartbeat ?? live.since);
    live.changing = true;
    try {
      await this.actor(nodeId).execute(command, systemContext(`no heartbeat for ${Math.round(silentMs / 1000)}s`), { precondition: due });
      this.afterCommand(nodeId);
      this.arm(nodeId);
    } catch (e) {
      this.options.logger.error({ err: e, nodeId }, "could not record a health change; retrying");
      live.timer = this.clock.setTimer(RETRY_AFTER_STORE_ERROR_MS, () => void this.onDeadline(nodeId));
    } finally {
      live.changing = false;
    }
  }

  /** Keeps the liveness cache in step with the actor after any command. */
  private afterCommand(nodeId: string): void {
    const actor = this.actors.get(nodeId);
    const live = this.liveness.get(nodeId);
    if (!actor || !live) return;
    if (!isRegistered(actor.state)) {
      live.timer?.cancel();
      this.liveness.delete(nodeId);
      return;
    }
    live.health = nodeHealth(actor.state) ?? "HEALTHY";
  }

  /** The orchestrator's own node: registered (or refreshed) as a Requester on every start. */
  async registerSelf(info: NodeInfo): Promise<CommandResult> {
    return this.actor(info.NodeID).execute({ type: "Register", info, manualApproval: false }, systemContext("orchestrator started"));
  }

  /**
   * A compute node joins: registers (or confirms its registration) and binds its key. Resolves
   * only once NATS lets that key in, so the node can reconnect with it straight away.
   */
  async join(info: NodeInfo, publicKey: string, context: CommandContext): Promise<CommandResult> {
    const result = await this.register(info, context, publicKey);
    try {
      await this.syncCredential(info.NodeID);
    } catch (e) {
      // The binding is stored; the node asks again (an idempotent join) once NATS has caught up.
      throw unavailable(`this node's key is recorded but NATS has not let it in yet: ${(e as Error).message}`);
    }
    return result;
  }

  /**
   * A compute node announces itself. Registration is also proof of life. A node id not currently
   * registered must pass admission (rate, PENDING cap) first; a refusal stores and keeps nothing.
   */
  async register(info: NodeInfo, context: CommandContext, publicKey?: string): Promise<CommandResult> {
    const nodeId = info.NodeID;
    const { manualApproval } = this.options;
    const command: NodeCommand = { type: "Register", info, manualApproval, ...(publicKey === undefined ? {} : { publicKey }) };
    const known = this.actors.get(nodeId);
    let result: CommandResult;
    if (known && isRegistered(known.state)) {
      result = await known.execute(command, context);
    } else {
      const release = this.admission.admit(nodeId, manualApproval, () => this.countPending());
      try {
        result = await this.withNewActor(nodeId, (actor) => actor.execute(command, context));
      } finally {
        release();
      }
    }
    const now = this.clock.now();
    if (!this.liveness.has(nodeId)) {
      this.liveness.set(nodeId, { lastHeartbeat: now, since: now, graceUntil: 0, transportBackAt: 0, health: "HEALTHY", changing: false, timer: undefined, resources: undefined });
      this.afterCommand(nodeId);
      this.arm(nodeId);
    } else {
      await this.heartbeat(nodeId, context.causationId);
    }
    return result;
  }

  /**
   * The hot path: one map lookup and one assignment while the node is healthy. Only a node
   * coming back from UNHEALTHY/UNKNOWN goes through its actor (and the store).
   */
  heartbeat(nodeId: string, causationId?: string): Promise<void> | undefined {
    const live = this.liveness.get(nodeId);
    if (!live) throw notFound(`node not registered: ${nodeId}`);
    live.lastHeartbeat = this.clock.now();
    if (live.health === "HEALTHY" && !live.changing) return undefined;
    return this.actor(nodeId)
      .execute({ type: "MarkHealthy" }, systemContext("heartbeat received", causationId))
      .then(() => {
        this.afterCommand(nodeId);
        this.arm(nodeId);
      });
  }

  /** Only registration creates an actor: a report for an unknown id must not leave one behind. */
  async updateInfo(info: NodeInfo, context: CommandContext): Promise<CommandResult> {
    const actor = this.actors.get(info.NodeID);
    if (!actor) throw notFound(`node not registered: ${info.NodeID}`);
    const result = await actor.execute({ type: "UpdateInfo", info }, context);
    // Labels may have moved the node into another threshold group.
    if (result.events.length > 0) this.arm(info.NodeID);
    return result;
  }

  updateResources(nodeId: string, report: ResourceReport): void {
    const live = this.liveness.get(nodeId);
    if (!live) throw notFound(`node not registered: ${nodeId}`);
    if (this.actors.get(nodeId)?.state.context.membership === "REJECTED") throw forbidden("node registration rejected");
    live.resources = report;
  }

  private countPending(): number {
    let pending = 0;
    for (const actor of this.actors.values()) {
      if (isRegistered(actor.state) && actor.state.context.membership === "PENDING") pending++;
    }
    return pending;
  }

  /** Runs a registration on the node's actor, creating it if needed and dropping it again if nothing got stored. */
  private async withNewActor<T>(nodeId: string, run: (actor: NodeActor) => Promise<T>): Promise<T> {
    this.creating.set(nodeId, (this.creating.get(nodeId) ?? 0) + 1);
    try {
      return await run(this.actor(nodeId));
    } finally {
      const left = (this.creating.get(nodeId) ?? 1) - 1;
      if (left > 0) this.creating.set(nodeId, left);
      else {
        this.creating.delete(nodeId);
        if (this.actors.get(nodeId)?.currentRevision === -1) this.actors.delete(nodeId);
      }
    }
  }

  /** How many node actors this manager holds (registered, deleted, or being registered now). */
  get actorCount(): number {
    return this.actors.size;
  }

  /** Exact id, else a unique prefix; `includeDeleted` also searches nodes whose history is all that is left. */
  resolve(idOrPrefix: string, includeDeleted = false): string {
    const candidates = [...this.actors.values()]
      .filter((a) => includeDeleted || isRegistered(a.state))
      .map((a) => a.nodeId);
    return resolveNodeId(idOrPrefix, candidates);
  }

  async operatorAction(
    action: "approve" | "reject" | "delete",
    idOrPrefix: string,
    context: CommandContext,
    expectedRevision?: number,
  ): Promise<CommandResult> {
    const nodeId = this.resolve(idOrPrefix);
    const command: NodeCommand = action === "approve" ? { type: "Approve" } : action === "reject" ? { type: "Reject" } : { type: "Delete" };
    const result = await this.actor(nodeId).execute(command, context, expectedRevision === undefined ? {} : { expectedRevision });
    this.afterCommand(nodeId);
    try {
      await this.syncCredential(nodeId);
    } catch (err) {
      // Stored is stored: the gate holds the new state and enforces it once NATS is back.
      this.options.logger.error({ err, nodeId }, "node credential change not yet enforced by NATS");
    }
    return result;
  }

  private syncCredential(nodeId: string): Promise<void> {
    const actor = this.actors.get(nodeId);
    return this.options.credentials?.apply(nodeId, actor ? activeCredential(actor.state) : undefined) ?? Promise.resolve();
  }

  /** Every node's live key: what NATS must let in after a restart. */
  activeCredentials(): [string, string][] {
    const out: [string, string][] = [];
    for (const actor of this.actors.values()) {
      const key = activeCredential(actor.state);
      if (key !== undefined) out.push([actor.nodeId, key]);
    }
    return out;
  }

  /**
   * The orchestrator's own transport (its NATS connection or embedded server) is down: no node
   * can reach us, so no node is marked UNHEALTHY or UNKNOWN for silence until transportUp().
   * A deadline that fires meanwhile writes nothing.
   */
  transportDown(reason: string): void {
    if (this.transportDownReason !== undefined) return;
    this.transportDownReason = reason;
    this.options.logger.warn({ reason }, "transport down: no node is marked unhealthy for silence until it is back");
  }

  /**
   * The transport is back: every node gets a full DisconnectTimeout from now before it can turn
   * UNHEALTHY (the same grace as after a restart), since none could heartbeat while it was down.
   */
  transportUp(): void {
    if (this.transportDownReason === undefined) return;
    this.transportDownReason = undefined;
    const now = this.clock.now();
    for (const [nodeId, live] of this.liveness) {
      live.graceUntil = Math.max(live.graceUntil, now + this.thresholdsOf(nodeId).disconnectMs);
      // As after a restart: a healthy node's silence during the outage is unknown, so it counts from now.
      if (live.health === "HEALTHY") live.transportBackAt = now;
      if (!live.changing) this.arm(nodeId);
    }
    this.options.logger.info({ nodes: this.liveness.size }, "transport back: every node has a full DisconnectTimeout to heartbeat");
  }

  get transportIsDown(): boolean {
    return this.transportDownReason !== undefined;
  }

  live(nodeId: string): LiveView | undefined {
    const live = this.liveness.get(nodeId);
    return live && { lastHeartbeat: live.lastHeartbeat, resources: live.resources };
  }

  revisionOf(nodeId: string): number {
    return this.actors.get(nodeId)?.currentRevision ?? -1;
  }

  stop(): void {
    this.stopped = true;
    for (const live of this.liveness.values()) live.timer?.cancel();
  }
}
