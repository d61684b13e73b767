import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Logger } from "pino";
import { decideReactions } from "../../../machines/reactions/decide-reactions.ts";
import type { EvictionPolicy, FleetHealth } from "../../../machines/reactions/eviction-rule.ts";
import { evolveReactionsAll } from "../../../machines/reactions/evolve-reactions.ts";
import {
  CHECK_DAEMON_MATCH,
  LOSE_NODE_WORK,
  QUEUE_NODE_LOSS,
  STOP_LOST_WORK,
  type ReactionCommand,
  type ReactionInput,
} from "../../../machines/reactions/reaction-commands.ts";
import {
  isStoredReactionEvent,
  type ReactionEvent,
  type StoredReactionEvent,
  type WaitingStanding,
} from "../../../machines/reactions/reaction-events.ts";
import {
  reactionEventsOf,
  reactionRecordOf,
  stepReactionEvents,
} from "../../../machines/reactions/reaction-records.ts";
import { reactionsDeadlines } from "../../../machines/reactions/reactions-deadlines.ts";
import { initialReactionsState, type ReactionsState } from "../../../machines/reactions/reactions-state.ts";
import type { Clock } from "../../actors/clock.ts";
import { commandContext, type CommandContext } from "../../actors/command-context.ts";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import {
  encodeNodeReactionRecordData,
  isNodeReactionRecordType,
  NODE_REACTION_RECORD_VERSIONS,
} from "../../events/catalog/node-reaction-record-codec.ts";
import type { EventStore } from "../../events/store/event-store.ts";
import type { ExecutionsByNode } from "../../projections/jobs/executions-by-node.ts";
import type { NodeView } from "../../projections/node-view.ts";
import type { NodeViews } from "../../projections/node-views.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import { NODE_DISAPPEARED_MESSAGE, nodeLostMessage } from "../../scheduler/job-outcome.ts";
import type { JobRunner } from "../jobs/job-runner.ts";
import { deterministicId } from "../../events/store/deterministic-id.ts";
import type { WorkflowHandler } from "../workflow.ts";
import { workflowActor } from "../workflow-actor.ts";
import { WORKFLOW_CATEGORY } from "../workflow-host.ts";
import { WorkflowStream } from "../workflow-stream.ts";
import { NODE_REACTIONS, NODE_WORK } from "./node-reactions.ts";
import { storedReactionRecord } from "./stored-reaction-record.ts";

type Issued = Parameters<WorkflowHandler>[0];

export const NODE_REACTIONS_ACTOR = workflowActor(NODE_REACTIONS);
/** The workflow's own stream: its steps and the queue's records. */
export const NODE_REACTIONS_STREAM = `${WORKFLOW_CATEGORY}-${NODE_REACTIONS}`;
/** The key of the reactions' next look on the deadline scheduler. */
const LOOK_DEADLINE = "node-reactions-look";
/** How many records of the workflow's stream a restart folds per read. */
const RECOVERY_PAGE = 5_000;

/** The node work a node's reactions call on (JobRunner's). */
export type NodeWork = Pick<JobRunner, "loseNodeWork" | "stopLostWork" | "checkDaemonMatch">;

export interface NodeReactionRunnerOptions {
  readonly work: NodeWork;
  /** Which nodes hold executions under way: the job read model's index (JobViews.byNode). */
  readonly byNode: Pick<ExecutionsByNode, "nodesWithWork">;
  /**
   * How far the job read model has folded: a node back is told to stop what was lost with it before its return, so the
   * read model must have folded up to the return first (its lanes run at their own pace).
   */
  readonly byNodeProgress?: Pick<ProcessorProgress, "waitFor">;
  readonly nodeViews: NodeViews;
  readonly policy: EvictionPolicy;
  readonly store: EventStore;
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Whether the orchestrator's own transport is down now (nothing moves meanwhile). */
  readonly transportDown: () => boolean;
}

/** The approved compute nodes in the cluster now, and how many are not HEALTHY. */
export function fleetHealthOf(views: Iterable<NodeView>): FleetHealth {
  let nodes = 0;
  let unhealthy = 0;
  for (const v of views) {
    if (v.deleted || v.nodeType !== "Compute" || v.membership !== "APPROVED") continue;
    nodes++;
    if (v.health !== "HEALTHY") unhealthy++;
  }
  return { nodes, unhealthy };
}

function standingOf(view: NodeView | undefined): WaitingStanding {
  if (view === undefined || view.deleted) return "GONE";
  if (view.membership === "REJECTED") return "REJECTED";
  return view.health;
}

/**
 * Hosts the node-reactions decider (machines/reactions/) and carries out its commands. A silent
 * node waits in a queue, first come first, until the eviction rule lets its work move: then, if it
 * is still not HEALTHY, its executions are lost (JobRunner.loseNodeWork) with the workflow as their
 * actor, the node and its state as their reason, the recorded step's input as their cause. A node
 * that comes back before its turn loses nothing.
 *
 * The queue is folded from the workflow's own stream, not kept only in memory: a QueueNodeLoss
 * step (recorded by the workflow host before it reaches here) queues a node, and every way out of
 * the queue is recorded there too (NodeLossReleased before its work is lost, NodeLossWithdrawn when
 * it is back or gone first, a LoseNodeWork or StopLostWork step). A restart folds that stream
 * (recover) and finds the queue in its order, with each node's reason and cause. This was chosen
 * over deriving the queue from the node read model and the executions: those do not keep the order
 * nodes started waiting, nor why. The periodic check (sweep) stays for what no step covers (a
 * deletion while the orchestrator was down, an execution placed as its node went silent); what it
 * queues it records as well.
 */
export class NodeReactionRunner {
  private state: ReactionsState = initialReactionsState();
  /** Steps applied since the last look, folded in one go before the next decision. */
  private pending: ReactionEvent[] = [];
  private lookQueued = false;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  /** The workflow's stream, which its host records the steps in too: one writer, so one known revision. */
  readonly steps: WorkflowStream;
  /**
   * The ids of the queue's records stored in the stream. A step replayed after a restart queues its node again, and
   * settling it again derives the same record id: it is stored already, and is not appended a second time.
   */
  private readonly recorded = new Set<string>();

  constructor(private readonly options: NodeReactionRunnerOptions) {
    this.steps = new WorkflowStream(options.store, NODE_REACTIONS_STREAM);
  }

  handlers(): Record<string, WorkflowHandler> {
    return { [NODE_WORK]: (c) => this.handle(c) };
  }

  /** Nodes whose work waits its turn, in order. */
  get queued(): string[] {
    this.applyPending();
    return [...this.state.waiting.keys()];
  }

  /**
   * Folds the workflow's stream: the queue as the last run left it. Before the workflow host
   * starts, so that the steps it replays apply onto it.
   */
  async recover(): Promise<void> {
    const events: ReactionEvent[] = [];
    for (let from = 0; ;) {
      const page = await this.options.store.readStream(NODE_REACTIONS_STREAM, {
        fromRevision: from,
        maxCount: RECOVERY_PAGE,
      });
      for (const r of page) {
        const record = storedReactionRecord(r);
        if (record === undefined) continue;
        events.push(...reactionEventsOf(record));
        if (isNodeReactionRecordType(r.type)) this.recorded.add(r.id);
      }
      if (page.length < RECOVERY_PAGE) break;
      from = (page[page.length - 1]?.revision ?? from) + 1;
    }
    this.state = evolveReactionsAll(this.state, events);
    this.options.logger.info({ waiting: this.state.waiting.size }, "silent nodes' queue recovered from its stream");
    this.schedule();
  }

  /**
   * Nothing moves for silence until `until` (a start, the transport's return: nodes get their DisconnectTimeout to
   * heartbeat).
   */
  holdUntil(until: number): void {
    this.adopt(decideReactions({ type: "HoldUntil", until }, this.state).events);
    this.schedule();
  }

  /** The transport is back, or the fleet changed: look again now. */
  wake(): void {
    this.schedule();
  }

  private async handle(c: Issued): Promise<void> {
    const nodeId = c.entityId;
    const context = commandContext(NODE_REACTIONS_ACTOR, {
      reason: c.reason,
      causationId: c.causationId,
      correlationId: c.correlationId,
    });
    // The step is recorded (the workflow host appends it before it calls here): now it is applied.
    this.pending.push(...stepReactionEvents(c, c.causationId, c.correlationId));
    switch (c.type) {
      case QUEUE_NODE_LOSS:
        this.schedule();
        return;
      case LOSE_NODE_WORK: {
        const deleted = c.reason === `node ${nodeId} was deleted`;
        await this.options.work.loseNodeWork(
          nodeId,
          deleted ? NODE_DISAPPEARED_MESSAGE : nodeLostMessage(nodeId, "was rejected"),
          context,
        );
        return;
      }
      case STOP_LOST_WORK:
        await this.options.byNodeProgress?.waitFor(c.causationPosition);
        this.options.work.stopLostWork(nodeId, c.causationPosition);
        return;
      case CHECK_DAEMON_MATCH:
        await this.options.work.checkDaemonMatch(nodeId, context);
        return;
      default:
        throw new Error(`${NODE_REACTIONS} issued ${c.type}, which ${NODE_WORK} does not know`);
    }
  }

  /**
   * Every node that holds work and is gone from the cluster, rejected, or not HEALTHY, and not
   * already waiting: what the workflow's steps may not cover (a deletion while the orchestrator
   * was down; an execution placed as its node went silent). Gone and rejected nodes lose their
   * work at once; silent ones join the queue.
   */
  async sweep(why: string): Promise<void> {
    const { nodeViews, work, byNode } = this.options;
    for (const nodeId of byNode.nodesWithWork()) {
      const view = nodeViews.get(nodeId);
      const context = (reason: string): CommandContext =>
        commandContext(NODE_REACTIONS_ACTOR, { reason: `${reason} (${why})` });
      if (view === undefined || view.deleted)
        await work.loseNodeWork(nodeId, NODE_DISAPPEARED_MESSAGE, context(`node ${nodeId} is gone`));
      else if (view.membership === "REJECTED")
        await work.loseNodeWork(nodeId, nodeLostMessage(nodeId, "was rejected"), context(`node ${nodeId} is rejected`));
      else if (view.health !== "HEALTHY") {
        this.applyPending();
        const input: ReactionInput = {
          type: "NodeFoundSilent",
          nodeId,
          health: view.health,
          why,
          recordId: randomUUID(),
        };
        const { events } = decideReactions(input, this.state);
        if (events.length === 0) continue;
        await this.record(events, why);
        this.adopt(events);
        this.schedule();
      }
    }
  }

  private schedule(): void {
    if (this.lookQueued || this.stopped) return;
    this.lookQueued = true;
    // Coalesced: a partition's many events cost one look at the fleet, not one each.
    void nextTurn().then(() => {
      this.lookQueued = false;
      this.running = this.running
        .then(() => this.look())
        .catch((err: unknown) => this.options.logger.error({ err }, "moving silent nodes' work failed"));
    });
  }

  private async look(): Promise<void> {
    if (this.stopped) return;
    const { nodeViews, clock, policy, logger, work } = this.options;
    this.applyPending();
    const standing = new Map<string, WaitingStanding>();
    for (const nodeId of this.state.waiting.keys()) standing.set(nodeId, standingOf(nodeViews.get(nodeId)));
    const fleet = this.state.waiting.size === 0 ? { nodes: 0, unhealthy: 0 } : fleetHealthOf(nodeViews.all());
    const input: ReactionInput = {
      type: "Look",
      now: clock.now(),
      transportDown: this.options.transportDown(),
      policy,
      fleet,
      standing,
    };
    const { events, commands } = decideReactions(input, this.state);
    const withdrawn = events.filter((e) => e.type === "NodeLossWithdrawn");
    if (withdrawn.length > 0) {
      await this.record(withdrawn, "a silent node came back (or left) before its work was moved");
      this.adopt(withdrawn);
      for (const e of withdrawn)
        logger.info(
          { nodeId: e.nodeId, health: nodeViews.get(e.nodeId)?.health },
          "a silent node came back (or left) before its work was moved",
        );
    }
    const before = this.state;
    const looked = events.filter((e) => e.type === "RateChecked" || e.type === "LookDue");
    this.adopt(looked);
    const rate = looked.find((e) => e.type === "RateChecked");
    if (rate !== undefined && rate.disruption !== before.disruption) {
      const level = rate.disruption === "normal" || rate.disruption === "grace" ? "info" : "warn";
      const waiting = this.state.waiting.size - commands.length;
      logger[level](
        { disruption: rate.disruption, rate: rate.rate, ...fleet, waiting },
        "silent nodes' work moves at a new rate",
      );
    }
    for (const c of commands) {
      if (c.type !== "LoseSilentNodeWork") continue;
      const released = events.filter((e) => e.type === "NodeLossReleased" && e.nodeId === c.nodeId);
      // Recorded before the work is lost: a crash in between finds the node out of the queue, and the check
      // (sweep) finds its work again.
      await this.record(released, c.waiting.reason, c.waiting);
      this.adopt(released);
      await work.loseNodeWork(c.nodeId, nodeLostMessage(c.nodeId, `became ${c.health}`), this.lossContext(c));
    }
    this.arm();
  }

  private lossContext(c: Extract<ReactionCommand, { type: "LoseSilentNodeWork" }>): CommandContext {
    const { waiting } = c;
    return commandContext(NODE_REACTIONS_ACTOR, {
      reason: waiting.reason,
      ...(waiting.causationId === "" ? {} : { causationId: waiting.causationId, correlationId: waiting.correlationId }),
    });
  }

  /** The next look on the one deadline scheduler, where the decider wants it. */
  private arm(): void {
    const { deadlines } = this.options;
    if (this.stopped) return;
    const [next] = reactionsDeadlines(this.state);
    if (next === undefined) deadlines.cancel(LOOK_DEADLINE);
    else deadlines.set(LOOK_DEADLINE, next.at, () => this.schedule());
  }

  /**
   * Appends the decision's stored events to the workflow's stream, one per append, at its exact revision: each id
   * derives from the record that queued the node, so a record appended again after a lost acknowledgement is found
   * rather than stored twice.
   */
  private async record(
    events: readonly ReactionEvent[],
    reason: string,
    waiting?: { causationId: string; correlationId: string },
  ): Promise<void> {
    const time = new Date(this.options.clock.now()).toISOString();
    const records = events.filter(isStoredReactionEvent).map((e) => ({ id: this.recordIdOf(e), e }));
    await Promise.all(
      records
        .filter(({ id }) => !this.recorded.has(id))
        .map(async ({ id, e }) => {
          await this.steps.append({
            id,
            type: e.type,
            data: encodeNodeReactionRecordData(reactionRecordOf(e)),
            metadata: {
              time,
              actor: NODE_REACTIONS_ACTOR,
              reason,
              ...(waiting === undefined || waiting.causationId === ""
                ? {}
                : { causationId: waiting.causationId, correlationId: waiting.correlationId }),
              schemaVersion: NODE_REACTION_RECORD_VERSIONS[e.type],
            },
          });
          this.recorded.add(id);
        }),
    );
  }

  private recordIdOf(e: StoredReactionEvent): string {
    if (e.type === "NodeLossQueued") return e.queuedBy;
    const queuedBy = this.state.waiting.get(e.nodeId)?.queuedBy ?? e.nodeId;
    return deterministicId(NODE_REACTIONS, "settled", queuedBy);
  }

  private adopt(events: readonly ReactionEvent[]): void {
    if (events.length > 0) this.state = evolveReactionsAll(this.state, events);
  }

  private applyPending(): void {
    if (this.pending.length === 0) return;
    const pending = this.pending;
    this.pending = [];
    this.adopt(pending);
  }

  stop(): void {
    this.stopped = true;
    this.options.deadlines.cancel(LOOK_DEADLINE);
  }
}
