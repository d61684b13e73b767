import { timeOrderedUuid } from "../events/store/time-ordered-uuid.ts";
import type { Logger } from "pino";
import type { NodeCommand, NodeRefusal } from "../../machines/node/node-commands.ts";
import { effectiveLabels } from "../../machines/node/effective-labels.ts";
import { activeCredential, type NodeState } from "../../machines/node/node-state.ts";
import { NODE_ID_PATTERN, NODE_ID_RULE } from "../events/catalog/node-id.ts";
import type { NodeEvent } from "../events/catalog/node-events.ts";
import type { NodeInfo, ResourceReport } from "../events/catalog/node-info.ts";
import type { EventStore } from "../events/store/event-store.ts";
import { type ShoalError, badRequest, forbidden, notFound, unavailable } from "../errors/shoal-error.ts";
import type { Clock } from "./clock.ts";
import { systemContext, type CommandContext } from "./command-context.ts";
import { DeadlineScheduler, type DeadlineKind } from "./deadline-scheduler.ts";
import type { CommandResult as EntityCommandResult, ExecuteOptions } from "./entity-actor.ts";
import { EntityRegistry } from "./entity-registry.ts";
import type { HealthThresholds, Thresholds } from "./health-thresholds.ts";
import { infoPrint, knownNode, knownUnchanged } from "./info-print.ts";
import { Listening } from "./listening.ts";
import { LivenessTracker } from "./liveness-tracker.ts";
import { NodeDirectory } from "./node-directory.ts";
import { nodeKind } from "./node-kind.ts";
import { RegistrationAdmission, type RegistrationLimits } from "./registration-admission.ts";
import { resolveNodeId } from "./resolve-node-id.ts";
import { StallWatch } from "./stall-watch.ts";
import { reconnectSpreadMs } from "../transport/reconnect-spread.ts";
import { SOLE_OWNER, type EntityOwnership } from "../cluster/entity-ownership.ts";

export type CommandResult = EntityCommandResult<NodeEvent>;

export interface LiveView {
  readonly lastHeartbeat: number | null;
  readonly resources: ResourceReport | undefined;
  /** Equal for two views of the same report, never for two reports; without it, `resources` itself is compared. */
  readonly resourcesVersion?: number;
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
  /** The orchestrator's one deadline heap; a manager of its own when absent (tests). */
  readonly deadlines?: DeadlineScheduler;
  /**
   * Watch this process for stalls of its own event loop longer than this: silence over a stall
   * is not held against nodes. Absent: not watched (tests on a manual clock, which never stalls).
   */
  readonly stallThresholdMs?: number;
  /** How long a node's actor stays in memory unused (default 5 minutes), and how many may. */
  readonly actorIdleMs?: number;
  readonly maxResidentActors?: number;
  /** Told whenever what live() reports as a node's resources changes (the node list's capacity index). */
  readonly onResources?: (nodeId: string, resources: ResourceReport | undefined) => void;
  /**
   * Logins per second the fleet is asked to keep to when it reconnects at once (our NATS back):
   * nodes spread their reconnects over reconnectSpreadMs() and the health grace grows by as much.
   * Absent or 0: no spread.
   */
  readonly reconnectLoginsPerSecond?: number;
  /**
   * Whether the orchestrator hears its nodes (it has started taking their reports, its transport is
   * up): no health change is written while it does not. Absent: listening from construction (tests).
   */
  readonly listening?: Listening;
  /**
   * Which nodes this orchestrator writes health for (its partitions' owner, among several orchestrators), and the lease
   * recorded on those writes. Absent: every node, no lease (one orchestrator).
   */
  readonly ownership?: EntityOwnership;
  /** This orchestrator's own node id: alive while this process runs, so never judged silent here. */
  readonly self?: string;
  /**
   * Other orchestrators' nodes are judged silent no sooner than this after they were last heard (orchestratorHeard):
   * the lease TTL, within which a live orchestrator always announces itself. Absent: the usual thresholds only.
   */
  readonly orchestratorSilenceMs?: number;
}

/** An operator's action on a node (PUT /api/v1/orchestrator/nodes/{id}). */
export type OperatorAction =
  | { readonly action: "approve" | "reject" | "delete" | "cordon" | "uncordon" }
  | {
      readonly action: "label";
      readonly set: Readonly<Record<string, string>>;
      readonly remove: readonly string[];
      readonly reset: readonly string[];
    };

/** The labels health-threshold groups select on: the node's own overlaid by the operator's. */
const labelsOf = (state: NodeState): Readonly<Record<string, string>> =>
  effectiveLabels(state.info?.Labels ?? {}, state.labelOverrides);

function operatorCommand(action: OperatorAction, context: CommandContext): NodeCommand {
  const reason = context.reason ?? "";
  switch (action.action) {
    case "approve":
      return { type: "Approve" };
    case "reject":
      return { type: "Reject" };
    case "delete":
      return { type: "Delete" };
    case "cordon":
      return { type: "Cordon", reason, by: context.actor };
    case "uncordon":
      return { type: "Uncordon", reason };
    case "label":
      return { type: "SetLabels", set: action.set, remove: action.remove, reset: action.reset };
  }
}

const NO_REGISTRATION_LIMITS: RegistrationLimits = {
  maxRegistrationsPerSecond: 0,
  registrationBurst: 0,
  maxPendingNodes: 0,
};

/** Info prints learnt per turn after start-up (≈ 15 ms of work). */
const PRINT_BATCH = 1000;
const RETRY_AFTER_STORE_ERROR_MS = 5000;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The orchestrator's nodes: their actors (generic entity actors, loaded on demand and
 * passivated when idle), the transient liveness of each compute node, and the health deadlines
 * that turn silence into commands. Only changes reach an actor and the store.
 */
export class NodeManager {
  private readonly actors: EntityRegistry<NodeState, NodeCommand, NodeEvent, NodeRefusal>;
  private readonly liveness = new LivenessTracker();
  /** The tracked nodes that are other orchestrators (Requester): heard through their announcements, not heartbeats. */
  private readonly orchestrators = new Set<string>();
  /**
   * This orchestrator's own node, untracked (alive while this process runs), and when it registered it on this start:
   * its last sign of life until it marks it stopped.
   */
  private selfStart: { readonly nodeId: string; readonly at: number } | undefined;
  private readonly directory = new NodeDirectory();
  private readonly deadlines: DeadlineScheduler;
  /** Each compute node's health deadline, keyed by its one id string. */
  private readonly healthDeadlines: DeadlineKind;
  private readonly stall: StallWatch | undefined;
  private stopped = false;
  /** False once stopping: no health change is judged any more (stopJudging). */
  private judging = true;
  /** Whether the nodes can reach us: silence while they cannot is ours, not theirs. */
  private readonly listening: Listening;
  private readonly admission: RegistrationAdmission;
  /**
   * Keys live at recovery, for NATS (only with a credential gate), handed over once: the gate keeps them from then on.
   */
  private recoveredCredentials: [string, string][] = [];
  /** Keys the store shows revoked and not live again, for NATS (a revocation cut short by a crash). */
  private revokedKeys = new Set<string>();
  /** A health change the store refused, tried again a while later: keyed by the node's one id string. */
  private readonly storeRetries: DeadlineKind;
  /**
   * Node ids an operator pre-authorised that are not registered, with the key pinned (if any):
   * their registration under manual approval makes no PENDING node, so the PENDING cap does not
   * apply to them.
   */
  private readonly preauthorized = new Map<string, string | undefined>();
  private printsLearnt: Promise<void> = Promise.resolve();
  /**
   * Among several orchestrators: each node's newest stream revision adopted, from this one's writes or the read
   * model's, so a view folded after a newer write of our own does not take the node back.
   */
  private readonly observedRevisions = new Map<string, number>();
  /** The time of the run of heartbeats being handled now, NaN between runs (beatTime). */
  private runTime = Number.NaN;
  private readonly endRun = () => {
    this.runTime = Number.NaN;
  };

  constructor(private readonly options: NodeManagerOptions) {
    this.deadlines = options.deadlines ?? new DeadlineScheduler(options.clock);
    this.admission = new RegistrationAdmission(
      options.registrationLimits ?? NO_REGISTRATION_LIMITS,
      options.clock,
      { logger: options.logger, deadlines: this.deadlines },
      () => this.ownership.share?.() ?? 1,
    );
    this.listening = options.listening ?? Listening.begun(options.clock);
    this.listening.onResume((why) => this.forgiveSilence(why));
    this.listening.onPause((reason) =>
      options.logger.warn({ reason }, "transport down: no node is marked unhealthy for silence until it is back"),
    );
    this.healthDeadlines = this.deadlines.kind((nodeId) => void this.onDeadline(nodeId));
    this.storeRetries = this.deadlines.kind((nodeId) => void this.onDeadline(nodeId));
    this.actors = new EntityRegistry(
      nodeKind,
      { store: options.store, clock: options.clock, deadlines: this.deadlines, newEventId: timeOrderedUuid },
      {
        idleMs: options.actorIdleMs ?? 5 * 60_000,
        maxResident: options.maxResidentActors ?? 10_000,
        logger: options.logger,
      },
    );
    if (options.stallThresholdMs !== undefined) {
      this.stall = new StallWatch(options.clock, this.deadlines, {
        thresholdMs: options.stallThresholdMs,
        onStall: (from, to) => this.stalled(from, to),
      });
      this.stall.start();
    }
  }

  private get clock(): Clock {
    return this.options.clock;
  }

  private get ownership(): EntityOwnership {
    return this.options.ownership ?? SOLE_OWNER;
  }

  /** The command's context with the lease its partition's owner writes under (none for a sole orchestrator). */
  private underLease(nodeId: string, context: CommandContext): CommandContext {
    const lease = this.ownership.leaseOf(nodeId);
    return lease === undefined ? context : { ...context, lease };
  }

  /**
   * A node's state as the read model folded it from another orchestrator's write (a registration it took, a health
   * change of a partition it owns): liveness, the directory and deadlines follow it. A view older than what this
   * orchestrator's own actor stored is ignored.
   */
  observe(view: NodeState & { readonly revision: number }): void {
    if (this.stopped) return;
    const id = this.directory.canonical(view.nodeId) ?? view.nodeId;
    const known = this.observedRevisions.get(id);
    if (known !== undefined && known >= view.revision) return;
    this.observedRevisions.set(id, view.revision);
    this.adopt(view);
    // Another orchestrator's join, reject or delete: this one's NATS gate follows, so that whichever orchestrator
    // answers next issues the node's login, or revokes it, as the one that wrote it would.
    this.options.credentials
      ?.apply(id, activeCredential(view))
      .catch((err: unknown) =>
        this.options.logger.error({ err, nodeId: id }, "node credential change not yet enforced by NATS"),
      );
  }

  /** Arms the health deadlines of the nodes `which` picks (a partition just taken: it is this orchestrator's now). */
  armWhere(which: (nodeId: string) => boolean): number {
    let armed = 0;
    for (const nodeId of this.liveness.nodeIds()) {
      if (!which(nodeId)) continue;
      this.arm(nodeId);
      armed++;
    }
    return armed;
  }

  /**
   * Drops the health deadlines and idle actors of the nodes `which` picks (a partition lost: its new owner arms them
   * and has their latest state).
   */
  disarmWhere(which: (nodeId: string) => boolean): number {
    this.actors.dropWhere(which);
    let dropped = 0;
    for (const nodeId of this.liveness.nodeIds()) {
      if (!which(nodeId)) continue;
      this.healthDeadlines.cancel(nodeId);
      this.storeRetries.cancel(nodeId);
      dropped++;
    }
    return dropped;
  }

  /**
   * Adopts what the node read model folded at start-up (it has caught up with the store): which nodes exist, their
   * health, pre-authorisations and keys; then arms health deadlines with a full grace period. Nothing is read from the
   * store here, and no actor is loaded: each loads its own stream on its next command. `revokedKeys` are the keys
   * revoked in the events folded; a key live on some node now is not among those kept out.
   */
  adoptRecovered(recovered: { readonly states: readonly NodeState[]; readonly revokedKeys: Iterable<string> }): void {
    const { states } = recovered;
    const started = this.clock.now();
    for (const key of recovered.revokedKeys) this.revokedKeys.add(key);
    const now = this.clock.now();
    // A restart is silence of our own: every node gets a full DisconnectTimeout from now (Bacalhau #4585).
    this.liveness.forgiveSilenceBefore(now);
    this.recoveredCredentials = [];
    for (const state of states) {
      const nodeId = this.directory.set(state);
      this.notePreauthorization(nodeId, state);
      const key = activeCredential(state);
      if (key !== undefined && this.options.credentials) this.recoveredCredentials.push([nodeId, key]);
      if (key !== undefined) this.revokedKeys.delete(key);
      // A rejected node's key, also when it came from a snapshot (a deleted node's is gone from its state).
      else if (state.credential && !state.credential.active) this.revokedKeys.add(state.credential.publicKey);
      if (!this.tracks(nodeId, state)) continue;
      const health = state.health ?? "HEALTHY";
      // The LastHeartbeat of the UNHEALTHY/UNKNOWN event that made it so (the state keeps it).
      const seen = state.lastHeartbeatAtChange;
      const slot = this.liveness.track(nodeId, now, {
        lastHeartbeat: health !== "HEALTHY" && typeof seen === "string" ? Date.parse(seen) : null,
        health,
        rejected: state.membership === "REJECTED",
        ...this.thresholdsOf(nodeId, state),
      });
      this.liveness.markRecovered(slot);
      this.arm(nodeId);
    }
    this.printsLearnt = this.learnInfoPrints(states);
    this.options.logger.info(
      { nodes: this.directory.size, tracked: this.liveness.size, ms: this.clock.now() - started },
      "adopted the nodes the read model recovered; their health deadlines are armed",
    );
  }

  /**
   * The prints of the recovered nodes' info, learnt after start-up in batches that yield (≈ 15 µs
   * a node), so that the first info report of each node after a restart does not load its actor.
   * A node something was stored for meanwhile is skipped: its actor teaches its print.
   */
  private async learnInfoPrints(states: readonly NodeState[]): Promise<void> {
    let done = 0;
    for (const state of states) {
      if (this.stopped) return;
      const slot = this.liveness.slotOf(state.nodeId);
      if (slot !== -1 && this.liveness.isRecovered(slot)) this.liveness.setInfoPrint(slot, knownNode(state).print);
      if (++done % PRINT_BATCH === 0) await yieldToEventLoop();
    }
  }

  /** Resolves once the recovered nodes' info prints are learnt. */
  whenInfoPrintsLearnt(): Promise<void> {
    return this.printsLearnt;
  }

  private arm(nodeId: string): void {
    if (this.stopped) return;
    const slot = this.liveness.slotOf(nodeId);
    const at = slot === -1 ? undefined : this.liveness.deadline(slot);
    if (at === undefined) this.healthDeadlines.cancel(nodeId);
    else this.healthDeadlines.set(nodeId, at);
  }

  /** Whether the node's health is due to change now (and may be written: our transport is up). */
  private due(slot: number): boolean {
    const at = this.liveness.deadline(slot);
    return !this.writesHeld && at !== undefined && this.clock.now() >= at;
  }

  private async onDeadline(nodeId: string): Promise<void> {
    if (this.stopped) return;
    // Nothing is written while the nodes cannot reach us: listening again re-arms every node.
    if (this.writesHeld || !this.judging) return;
    // Another orchestrator owns the node's partition: it writes the change. Taking the partition re-arms it (armWhere).
    if (!this.ownership.owns(nodeId)) return;
    // Timers due during a stall of our own run before the heartbeats queued meanwhile: look first.
    this.stall?.check();
    const slot = this.liveness.slotOf(nodeId);
    if (slot === -1) return;
    // Heartbeats only move lastHeartbeat; the deadline notices here and re-arms (lazy deadlines).
    if (!this.due(slot)) return this.arm(nodeId);
    const { disconnectMs, unknownMs } = this.liveness.thresholds(slot);
    const last = this.liveness.lastHeartbeat(slot);
    const lastHeartbeat = last === null ? null : new Date(last).toISOString();
    const command: NodeCommand = this.liveness.isHealthy(slot)
      ? { type: "MarkUnhealthy", lastHeartbeat, disconnectTimeoutMs: disconnectMs }
      : { type: "MarkUnknown", lastHeartbeat, unknownTimeoutMs: unknownMs };
    const silentMs = this.clock.now() - this.liveness.silentSince(slot);
    this.liveness.setChanging(slot, true);
    try {
      const seconds = Math.round(silentMs / 1000);
      const why = this.orchestrators.has(nodeId)
        ? `orchestrator ${nodeId} not heard from for ${seconds}s`
        : `no heartbeat for ${seconds}s`;
      await this.execute(nodeId, command, this.underLease(nodeId, systemContext(why)), {
        precondition: () => this.liveness.slotOf(nodeId) === slot && this.due(slot),
      });
      this.arm(nodeId);
    } catch (e) {
      this.options.logger.error({ err: e, nodeId }, "could not record a health change; retrying");
      this.storeRetries.set(nodeId, this.clock.now() + RETRY_AFTER_STORE_ERROR_MS);
    } finally {
      if (this.liveness.slotOf(nodeId) === slot) this.liveness.setChanging(slot, false);
    }
  }

  /** Runs a command on the node's actor and brings the directory and liveness in step with what it stored. */
  private async execute(
    nodeId: string,
    command: NodeCommand,
    context: CommandContext,
    options?: ExecuteOptions<NodeState>,
    streamAbsent = false,
  ): Promise<CommandResult> {
    return (await this.executeWithState(nodeId, command, context, options, streamAbsent))[0];
  }

  /** execute(), also handing over the state the command left. */
  private async executeWithState(
    nodeId: string,
    command: NodeCommand,
    context: CommandContext,
    options?: ExecuteOptions<NodeState>,
    streamAbsent = false,
  ): Promise<[CommandResult, NodeState]> {
    // One id string per node for everything kept (the actor, its state): the caller's may be a slice of a whole
    // message.
    const id = this.directory.canonical(nodeId) ?? nodeId;
    const [result, state] = await this.actors.executeWithState(id, command, context, options, streamAbsent);
    if (result.events.length > 0) {
      if (this.options.ownership) this.observedRevisions.set(id, result.revision);
      this.adopt(state);
    }
    return [result, state];
  }

  private notePreauthorization(nodeId: string, state: NodeState): void {
    const pre = state.preauthorization;
    if (pre !== undefined && !state.registered) this.preauthorized.set(nodeId, pre.publicKey);
    else this.preauthorized.delete(nodeId);
  }

  /** Whether the node's registration will be APPROVED on a pre-authorisation (the decider's rule, for admission). */
  private admitsPreauthorized(nodeId: string, publicKey: string | undefined): boolean {
    if (!this.preauthorized.has(nodeId)) return false;
    const pinned = this.preauthorized.get(nodeId);
    return pinned === undefined || pinned === publicKey;
  }

  /**
   * Whether the node's liveness is tracked here (noting whether it is another orchestrator's): a registered compute
   * node, or another orchestrator's node (heard through its announcements; a retired one, never heard again, goes
   * UNHEALTHY as a silent compute node does). This orchestrator's own node is alive as long as this process runs, and
   * is never judged by it.
   */
  private tracks(nodeId: string, state: NodeState): boolean {
    const orchestrator = state.registered && state.nodeType === "Requester" && nodeId !== this.options.self;
    if (orchestrator) this.orchestrators.add(nodeId);
    else this.orchestrators.delete(nodeId);
    return (state.registered && state.nodeType === "Compute") || orchestrator;
  }

  /** The node's health thresholds; an orchestrator's are at least its announcements' silence bound. */
  private thresholdsOf(nodeId: string, state: NodeState): Thresholds {
    const thresholds = this.options.thresholds.for(nodeId, labelsOf(state));
    const floor = this.options.orchestratorSilenceMs;
    if (floor === undefined || !this.orchestrators.has(nodeId)) return thresholds;
    return { disconnectMs: Math.max(thresholds.disconnectMs, floor), unknownMs: Math.max(thresholds.unknownMs, floor) };
  }

  /** Keeps the directory and liveness in step with a node's stored state. */
  private adopt(state: NodeState): void {
    const nodeId = this.directory.set(state);
    this.notePreauthorization(nodeId, state);
    if (!this.tracks(nodeId, state)) {
      if (this.liveness.slotOf(nodeId) !== -1) this.options.onResources?.(nodeId, undefined);
      this.liveness.forget(nodeId);
      this.healthDeadlines.cancel(nodeId);
      return;
    }
    const node = {
      health: state.health ?? "HEALTHY",
      rejected: state.membership === "REJECTED",
      ...this.thresholdsOf(nodeId, state),
    };
    const slot = this.liveness.slotOf(nodeId);
    // Registration is also proof of life.
    if (slot === -1) {
      // A new slot starts with no info print (track clears its flags).
      this.liveness.track(nodeId, this.clock.now(), { ...node, lastHeartbeat: this.clock.now() });
      this.options.onResources?.(nodeId, undefined);
    } else {
      this.liveness.update(slot, node, this.clock.now());
      // What the node's info is now is learnt again from its actor, on its next info report.
      this.liveness.setInfoPrint(slot, undefined);
    }
    if (slot === -1 || !this.liveness.isChanging(slot)) this.arm(nodeId);
  }

  /**
   * A node's stream may have moved under another writer (a second orchestrator on a shared
   * store): read it again, and stop tracking the node if it is no longer in the cluster.
   * Idempotent — the `forget-deleted-nodes` workflow calls it for every NodeDeleted it sees.
   */
  async forgetIfGone(nodeId: string): Promise<void> {
    const actor = await this.actors.get(this.directory.canonical(nodeId) ?? nodeId);
    await actor.refresh();
    if (actor.currentRevision === -1) return;
    if (!actor.state.registered && (this.directory.isRegistered(nodeId) || this.liveness.slotOf(nodeId) !== -1)) {
      this.options.logger.info({ nodeId }, "node deleted by another writer: its liveness is forgotten");
    }
    if (!actor.state.registered) this.adopt(actor.state);
  }

  /**
   * The orchestrator's own node: registered (or refreshed) as a Requester on every start, and HEALTHY again if its
   * last stop (or its silence) left it otherwise.
   */
  async registerSelf(info: NodeInfo): Promise<CommandResult> {
    const nodeId = info.NodeID;
    const started = systemContext(`orchestrator ${nodeId} started`);
    const at = this.clock.now();
    const [registered, state] = await this.executeWithState(
      nodeId,
      { type: "Register", info, manualApproval: false },
      started,
    );
    this.selfStart = { nodeId, at };
    if ((state.health ?? "HEALTHY") === "HEALTHY") return registered;
    const back = await this.execute(nodeId, { type: "MarkHealthy" }, this.underLease(nodeId, started));
    return back.position === undefined ? registered : back;
  }

  /**
   * The orchestrator stops gracefully: its own node turns UNHEALTHY, saying so, before it leaves (a killed one is
   * judged by the others, once it is not heard from).
   */
  async markSelfStopped(nodeId: string): Promise<CommandResult> {
    // From now on the stop is its last sign of life (the event's LastHeartbeat).
    if (this.selfStart?.nodeId === nodeId) this.selfStart = undefined;
    const state = await this.nodeState(nodeId);
    const command: NodeCommand = {
      type: "MarkUnhealthy",
      lastHeartbeat: new Date(this.clock.now()).toISOString(),
      disconnectTimeoutMs: this.options.thresholds.for(nodeId, labelsOf(state)).disconnectMs,
    };
    return this.execute(nodeId, command, this.underLease(nodeId, systemContext(`orchestrator ${nodeId} stopped`)));
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
    const command: NodeCommand = {
      type: "Register",
      info,
      manualApproval,
      ...(publicKey === undefined ? {} : { publicKey }),
    };
    const known = this.liveness.slotOf(nodeId) !== -1;
    let result: CommandResult;
    if (this.directory.isRegistered(nodeId)) {
      result = await this.execute(nodeId, command, context);
    } else {
      const willPend = manualApproval && !this.admitsPreauthorized(nodeId, publicKey);
      const release = this.admission.admit(nodeId, willPend, () => this.directory.pending);
      try {
        // The directory holds every id with stored history (deleted ones too): an id it lacks has
        // no stream to read (a registration storm's new nodes: one store read each, saved).
        result = await this.execute(nodeId, command, context, undefined, !this.directory.has(nodeId));
      } finally {
        release();
      }
    }
    if (known && this.liveness.slotOf(nodeId) !== -1) await this.heartbeat(nodeId, context.causationId);
    return result;
  }

  /**
   * A heartbeat by node id (request heartbeats, any the byte path leaves): one map lookup and one
   * store into a typed array while the node is healthy.
   * Only a node coming back from UNHEALTHY/UNKNOWN goes through its actor (and the store).
   */
  heartbeat(nodeId: string, causationId?: string): Promise<void> | undefined {
    const slot = this.liveness.slotOf(nodeId);
    if (slot === -1) throw this.notRegistered(nodeId);
    this.liveness.beat(slot, this.clock.now());
    if (this.liveness.isHealthy(slot) && !this.liveness.isChanging(slot)) return undefined;
    // Its partition's owner hears the same heartbeat and writes the recovery.
    if (!this.ownership.owns(nodeId)) return undefined;
    const why = this.orchestrators.has(nodeId) ? `orchestrator ${nodeId} heard from again` : "heartbeat received";
    const context = this.underLease(nodeId, systemContext(why, causationId));
    return this.execute(nodeId, { type: "MarkHealthy" }, context).then(() => this.arm(nodeId));
  }

  /**
   * Another orchestrator announced itself (its presence among several orchestrators): its node's heartbeat. An
   * orchestrator this one does not track yet (its registration is on its way through the read model) is skipped.
   */
  orchestratorHeard(nodeId: string): void {
    if (this.stopped || !this.orchestrators.has(nodeId)) return;
    this.heartbeat(nodeId)?.catch((err: unknown) =>
      this.options.logger.error(
        { err, nodeId },
        "could not record an orchestrator's return; its next announcement retries",
      ),
    );
  }

  /**
   * The hot path of a heartbeat from the node whose id is spelled by `id[from, from + length)`
   * (the bytes of a message the caller has checked): one table look-up and one typed-array write,
   * nothing decoded or allocated. Records it and returns true only for a node that is healthy and
   * not being changed; false records nothing, and the caller takes `heartbeat()` (unknown node,
   * coming back from UNHEALTHY/UNKNOWN).
   */
  beatIfHealthy(id: Uint8Array, from: number, length: number): boolean {
    const slot = this.liveness.slotOfBytes(id, from, length);
    if (slot === -1 || !this.liveness.isHealthy(slot) || this.liveness.isChanging(slot)) return false;
    this.liveness.beat(slot, this.beatTime());
    return true;
  }

  /**
   * The clock, read once per run of heartbeats handled back to back (nats.js hands over a whole
   * socket read's messages synchronously): every heartbeat of the run is recorded at its start,
   * at most that run's processing time (a few ms) before it was handled, and never after it.
   */
  private beatTime(): number {
    if (Number.isNaN(this.runTime)) {
      this.runTime = this.clock.now();
      queueMicrotask(this.endRun);
    }
    return this.runTime;
  }

  /**
   * Only registration creates a node: a report for an unknown id must not leave anything behind.
   * An agent reports its info every minute, nearly always unchanged: when the print of the
   * node's stored info is known and equal, the answer is the decider's (nothing to store)
   * without loading the node's actor. Resolves to the events stored.
   */
  async updateInfo(info: NodeInfo, context: CommandContext): Promise<readonly NodeEvent[]> {
    const nodeId = this.directory.canonical(info.NodeID);
    if (nodeId === undefined) throw this.notRegistered(info.NodeID);
    const slot = this.liveness.slotOf(nodeId);
    const print = infoPrint(info);
    if (
      slot !== -1 &&
      knownUnchanged(
        { compute: true, rejected: this.liveness.isRejected(slot), print: this.liveness.infoPrint(slot) },
        info,
        print,
      )
    )
      return [];
    const result = await this.execute(nodeId, { type: "UpdateInfo", info }, context);
    const now = this.liveness.slotOf(nodeId);
    const actor = this.actors.peek(nodeId);
    // Learnt only from the latest stored state: the actor's, while no other command is changing it.
    if (now !== -1 && actor?.idle) {
      const known = knownNode(actor.state);
      if (known.compute && known.print?.hi === print.hi && known.print.lo === print.lo)
        this.liveness.setInfoPrint(now, known.print);
    }
    return result.events;
  }

  updateResources(nodeId: string, report: ResourceReport): void {
    const slot = this.liveness.slotOf(nodeId);
    if (slot === -1) throw this.notRegistered(nodeId);
    if (this.liveness.isRejected(slot)) throw forbidden("node registration rejected");
    this.liveness.setResources(slot, report);
    // The tracker's id string, not the caller's (a slice of the message's subject).
    this.options.onResources?.(this.liveness.idOf(slot) as string, report);
  }

  /**
   * The refusal of a report from a node this orchestrator does not track. Among several orchestrators, a node another
   * one registered a moment ago (its partition's former owner, or any of them before the partitions were shared out)
   * may not have reached this one's read model yet: an id with no history here is refused Unavailable, which the agent
   * rides out, not NotFound, which tells it an operator deleted it and stops its reports for good.
   */
  private notRegistered(nodeId: string): ShoalError {
    if (this.options.ownership !== undefined && !this.directory.has(nodeId))
      return unavailable(`node ${nodeId} is not known to this orchestrator yet (its registration is on its way)`, 1);
    return notFound(`node not registered: ${nodeId}`);
  }

  /** How many node ids this manager knows: in the cluster, or deleted with their history kept. */
  get nodeCount(): number {
    return this.directory.size;
  }

  /** Node actors in memory now, and how many were dropped for being idle. */
  get actorStats(): { resident: number; passivated: number; loaded: number } {
    return { resident: this.actors.residentCount, passivated: this.actors.passivated, loaded: this.actors.loaded };
  }

  get deadlineCount(): number {
    return this.deadlines.size;
  }

  /** Whether `nodeId` (exactly) is registered now. */
  isRegistered(nodeId: string): boolean {
    return this.directory.isRegistered(nodeId);
  }

  /** Exact id, else a unique prefix; `includeDeleted` also searches nodes whose history is all that is left. */
  resolve(idOrPrefix: string, includeDeleted = false): string {
    if (includeDeleted ? this.directory.has(idOrPrefix) : this.directory.isRegistered(idOrPrefix)) return idOrPrefix;
    return resolveNodeId(idOrPrefix, this.directory.ids(includeDeleted));
  }

  /**
   * A registered node's exact id, as the caller resolved it (the REST route, against its own read model): never taken
   * as a prefix again here, where it could name another node. Among several orchestrators, an id this one has no
   * history of yet is Unavailable (the receiver knew it; this one's read model is behind).
   */
  private registered(nodeId: string): string {
    if (this.directory.isRegistered(nodeId)) return nodeId;
    if (this.options.ownership !== undefined && !this.directory.has(nodeId)) throw this.notRegistered(nodeId);
    throw notFound(`node not found: ${nodeId}`);
  }

  /** An operator's action on a registered node, by its exact id. */
  async operatorAction(
    operatorAction: OperatorAction | "approve" | "reject" | "delete",
    exactId: string,
    context: CommandContext,
    expectedRevision?: number,
  ): Promise<CommandResult> {
    const action = typeof operatorAction === "string" ? { action: operatorAction } : operatorAction;
    const nodeId = this.registered(exactId);
    const command = operatorCommand(action, context);
    const result = await this.execute(
      nodeId,
      command,
      context,
      expectedRevision === undefined ? {} : { expectedRevision },
    );
    try {
      await this.syncCredential(nodeId);
    } catch (err) {
      // Stored is stored: the gate holds the new state and enforces it once NATS is back.
      this.options.logger.error({ err, nodeId }, "node credential change not yet enforced by NATS");
    }
    return result;
  }

  /**
   * Lets a node id in APPROVED on its registration even under manual approval — only a node
   * joining with `publicKey`, when given. The id is taken exactly (no prefix: the node need not
   * exist yet); a registered node is refused (approve it instead).
   */
  async preauthorize(
    nodeId: string,
    publicKey: string | undefined,
    context: CommandContext,
    expectedRevision?: number,
  ): Promise<CommandResult> {
    if (!NODE_ID_PATTERN.test(nodeId)) throw badRequest(`node id ${JSON.stringify(nodeId)}: ${NODE_ID_RULE}`);
    const command: NodeCommand = {
      type: "Preauthorize",
      ...(publicKey === undefined ? {} : { publicKey }),
      reason: context.reason ?? "",
      by: context.actor,
    };
    return this.execute(
      nodeId,
      command,
      context,
      expectedRevision === undefined ? {} : { expectedRevision },
      !this.directory.has(nodeId),
    );
  }

  /**
   * Withdraws a pre-authorisation (exact id); NotFound when there is none (the decider's answer:
   * a node only pre-authorised is not in a node-state snapshot, so the directory may not know it).
   */
  async revokePreauthorization(
    nodeId: string,
    context: CommandContext,
    expectedRevision?: number,
  ): Promise<CommandResult> {
    if (!NODE_ID_PATTERN.test(nodeId)) throw badRequest(`node id ${JSON.stringify(nodeId)}: ${NODE_ID_RULE}`);
    return this.execute(
      nodeId,
      { type: "RevokePreauthorization" },
      context,
      expectedRevision === undefined ? {} : { expectedRevision },
    );
  }

  /**
   * An operator drains a node (docs/nodes.md, Drain), by its exact id: the deadline is the host's clock plus
   * `deadlineMs`, fixed in the event; who asked is the context's actor.
   */
  async drain(
    exactId: string,
    spec: { readonly deadlineMs: number; readonly keepDaemon: boolean },
    context: CommandContext,
    expectedRevision?: number,
  ): Promise<CommandResult> {
    const nodeId = this.registered(exactId);
    const command: NodeCommand = {
      type: "Drain",
      deadline: new Date(this.options.clock.now() + spec.deadlineMs).toISOString(),
      keepDaemon: spec.keepDaemon,
      reason: context.reason ?? "",
      by: context.actor,
    };
    return this.execute(nodeId, command, context, expectedRevision === undefined ? {} : { expectedRevision });
  }

  /** Ends a drain under way, or lets a drained node take work again (Nomad's `node drain -disable`). */
  async undrain(exactId: string, context: CommandContext, expectedRevision?: number): Promise<CommandResult> {
    return this.execute(
      this.registered(exactId),
      { type: "Undrain" },
      context,
      expectedRevision === undefined ? {} : { expectedRevision },
    );
  }

  /**
   * A node's state as its actor holds it (loaded from its stream if needed): what the drain workflow acts on, never
   * behind the store.
   */
  async nodeState(nodeId: string): Promise<NodeState> {
    const actor = await this.actors.get(this.directory.canonical(nodeId) ?? nodeId);
    return actor.state;
  }

  /** The drain workflow's own command on a node (its completion, its deadline): by the node's actor, as any other. */
  async drainCommand(
    nodeId: string,
    command: Extract<NodeCommand, { type: "CompleteDrain" | "ExpireDrain" }>,
    context: CommandContext,
  ): Promise<CommandResult> {
    return this.execute(nodeId, command, context);
  }

  private async syncCredential(nodeId: string): Promise<void> {
    if (!this.options.credentials) return;
    const actor = await this.actors.get(this.directory.canonical(nodeId) ?? nodeId);
    await this.options.credentials.apply(nodeId, activeCredential(actor.state));
  }

  /** Every key the store shows revoked and not live at recovery: what NATS must keep out after a restart. */
  revokedCredentials(): string[] {
    return [...this.revokedKeys];
  }

  /**
   * Every node's live key as recovery found it: what NATS must let in after a restart. Handed
   * over once (the credential gate keeps them from then on); empty without a gate.
   */
  activeCredentials(): [string, string][] {
    const keys = this.recoveredCredentials;
    this.recoveredCredentials = [];
    return keys;
  }

  /** Nodes cannot reach us (starting, transport down): silence now is ours; no health change is written. */
  private get writesHeld(): boolean {
    return this.listening.since === undefined;
  }

  /**
   * How long the connected fleet is asked to spread its reconnects over (docs/protocol.md,
   * Reconnecting): told to every node in its replies, and added to the health grace after a
   * restart or our transport's return.
   */
  reconnectSpreadMs(): number {
    return reconnectSpreadMs(this.liveness.connectedCount, this.options.reconnectLoginsPerSecond ?? 0);
  }

  /** The instant before which no node's silence counts (the end of the latest grace). */
  get silenceCountsFrom(): number {
    return this.liveness.silenceCountsFrom;
  }

  /** Our own event loop stood still: heartbeats could not be read, so no node is blamed for that silence. */
  private stalled(from: number, to: number): void {
    // The nodes' connections stayed up: they need no time to reconnect, only to be read.
    this.liveness.forgiveSilenceBefore(this.clock.now());
    this.rearmAll();
    this.options.logger.warn(
      { stalledMs: to - from, nodes: this.liveness.size },
      "the orchestrator stalled: every node has a full DisconnectTimeout from now to heartbeat",
    );
  }

  /**
   * The fleet can reach us again (listening after a start, our transport back; a restart and a
   * transport's return alike give every node a full DisconnectTimeout after the grace): all of it
   * reconnects now, spread over reconnectSpreadMs(), so silence counts from the end of that spread.
   */
  private forgiveSilence(why: string): void {
    const spreadMs = this.reconnectSpreadMs();
    this.liveness.forgiveSilenceBefore(this.clock.now() + spreadMs);
    this.rearmAll();
    this.options.logger.info(
      { nodes: this.liveness.size, connected: this.liveness.connectedCount, reconnectSpreadMs: spreadMs },
      `${why}: every node has the reconnect spread and then a full DisconnectTimeout to heartbeat`,
    );
  }

  /** Every deadline recomputed (a deadline that fired meanwhile was not re-armed). */
  private rearmAll(): void {
    for (const nodeId of this.liveness.nodeIds()) {
      const slot = this.liveness.slotOf(nodeId);
      if (!this.liveness.isChanging(slot)) this.arm(nodeId);
    }
  }

  /**
   * What moves without an event: a tracked node's last heartbeat and resources; for this orchestrator's own node, its
   * start until it is marked stopped (else, HEALTHY again, it would show the LastHeartbeat its last stop recorded).
   */
  live(nodeId: string): LiveView | undefined {
    const slot = this.liveness.slotOf(nodeId);
    if (slot === -1) {
      const own = this.selfStart?.nodeId === nodeId ? this.selfStart : undefined;
      return own && { lastHeartbeat: own.at, resources: undefined };
    }
    return {
      lastHeartbeat: this.liveness.lastHeartbeat(slot),
      resources: this.liveness.resources(slot),
      resourcesVersion: this.liveness.reportVersion(slot),
    };
  }

  /**
   * No node's health is changed from now on (a stop: the compute protocol is about to stop, so heartbeats no longer
   * arrive, and silence would be this orchestrator's own). Operators' and nodes' commands still run until stop().
   */
  stopJudging(): void {
    this.judging = false;
  }

  stop(): void {
    this.stopped = true;
    // The refusals counted so far are not lost with the deadline that would have logged them.
    this.admission.flush();
    this.stall?.stop();
    this.actors.stop();
    this.deadlines.stop();
  }
}
