import { setImmediate as nextTurn } from "node:timers/promises";
import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../actors/clock.ts";
import { commandContext, type CommandContext } from "../../actors/command-context.ts";
import type { NodeView } from "../../projections/node-view.ts";
import type { NodeViews } from "../../projections/node-views.ts";
import { NODE_DISAPPEARED_MESSAGE, nodeLostMessage } from "../../scheduler/job-outcome.ts";
import type { JobRunner } from "../jobs/job-runner.ts";
import type { WorkflowHandler } from "../workflow.ts";
import {
  FULL_BUCKET,
  evictionStep,
  type Disruption,
  type EvictionBucket,
  type EvictionPolicy,
  type FleetHealth,
} from "./eviction-rule.ts";
import {
  CHECK_DAEMON_MATCH,
  LOSE_NODE_WORK,
  NODE_REACTIONS,
  NODE_WORK,
  QUEUE_NODE_LOSS,
  STOP_LOST_WORK,
} from "./node-reactions.ts";

type Issued = Parameters<WorkflowHandler>[0];

/** While paused (a fleet mostly silent), the fleet is looked at again this often. */
const PAUSED_RECHECK_MS = 5_000;

export const NODE_REACTIONS_ACTOR = { type: "system", id: `workflow-${NODE_REACTIONS}` } as const;

/** The node work a node's reactions call on (JobRunner's). */
export type NodeWork = Pick<JobRunner, "loseNodeWork" | "stopLostWork" | "checkDaemonMatch" | "nodesWithWork">;

export interface NodeReactionRunnerOptions {
  readonly work: NodeWork;
  readonly nodeViews: NodeViews;
  readonly policy: EvictionPolicy;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Whether the orchestrator's own transport is down now (nothing moves meanwhile). */
  readonly transportDown: () => boolean;
}

interface Waiting {
  readonly reason: string;
  readonly causationId: string;
  readonly correlationId: string;
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

/**
 * Carries out the node-reactions workflow's commands (node-reactions.ts). A silent node waits in
 * a queue, first come first, until the eviction rule (eviction-rule.ts) lets its work move: then,
 * if it is still not HEALTHY, its executions are lost (JobRunner.loseNodeWork) with the workflow
 * as their actor, the node and its state as their reason, the recorded step's input as their
 * cause. A node that comes back before its turn loses nothing. The queue is memory: after a
 * restart, sweep() finds again every node not HEALTHY that still holds work.
 */
export class NodeReactionRunner {
  /** Insertion-ordered: the order nodes started waiting. */
  private readonly waiting = new Map<string, Waiting>();
  private bucket: EvictionBucket;
  private timer: TimerHandle | undefined;
  private tickQueued = false;
  private stopped = false;
  private graceUntil: number | undefined;
  private lastDisruption: Disruption = "normal";
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: NodeReactionRunnerOptions) {
    this.bucket = FULL_BUCKET(options.clock.now());
  }

  handlers(): Record<string, WorkflowHandler> {
    return { [NODE_WORK]: (c) => this.handle(c) };
  }

  /** Nodes whose work waits its turn, in order. */
  get queued(): string[] {
    return [...this.waiting.keys()];
  }

  /**
   * Nothing moves for silence until `until` (a start, the transport's return: nodes get their DisconnectTimeout to
   * heartbeat).
   */
  holdUntil(until: number): void {
    this.graceUntil = Math.max(this.graceUntil ?? 0, until);
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
    switch (c.type) {
      case QUEUE_NODE_LOSS:
        this.queue(nodeId, { reason: c.reason, causationId: c.causationId, correlationId: c.correlationId });
        return;
      case LOSE_NODE_WORK: {
        this.waiting.delete(nodeId);
        const deleted = c.reason === `node ${nodeId} was deleted`;
        await this.options.work.loseNodeWork(
          nodeId,
          deleted ? NODE_DISAPPEARED_MESSAGE : nodeLostMessage(nodeId, "was rejected"),
          context,
        );
        return;
      }
      case STOP_LOST_WORK:
        this.waiting.delete(nodeId);
        this.options.work.stopLostWork(nodeId);
        return;
      case CHECK_DAEMON_MATCH:
        await this.options.work.checkDaemonMatch(nodeId, context);
        return;
      default:
        throw new Error(`${NODE_REACTIONS} issued ${c.type}, which ${NODE_WORK} does not know`);
    }
  }

  private queue(nodeId: string, waiting: Waiting): void {
    if (this.waiting.has(nodeId)) return;
    this.waiting.set(nodeId, waiting);
    this.schedule();
  }

  /**
   * Every node that holds work and is gone from the cluster, rejected, or not HEALTHY, and not
   * already waiting: what the workflow's steps may not cover (a restart lost the queue; a
   * deletion while the orchestrator was down; an execution placed as its node went silent).
   * Gone and rejected nodes lose their work at once; silent ones join the queue.
   */
  async sweep(why: string): Promise<void> {
    const { nodeViews, work } = this.options;
    for (const nodeId of work.nodesWithWork()) {
      const view = nodeViews.get(nodeId);
      const context = (reason: string): CommandContext =>
        commandContext(NODE_REACTIONS_ACTOR, { reason: `${reason} (${why})` });
      if (view === undefined || view.deleted)
        await work.loseNodeWork(nodeId, NODE_DISAPPEARED_MESSAGE, context(`node ${nodeId} is gone`));
      else if (view.membership === "REJECTED")
        await work.loseNodeWork(nodeId, nodeLostMessage(nodeId, "was rejected"), context(`node ${nodeId} is rejected`));
      else if (view.health !== "HEALTHY" && !this.waiting.has(nodeId))
        this.queue(nodeId, { reason: `node ${nodeId} is ${view.health} (${why})`, causationId: "", correlationId: "" });
    }
  }

  private schedule(): void {
    if (this.tickQueued || this.stopped) return;
    this.tickQueued = true;
    // Coalesced: a partition's many events cost one look at the fleet, not one each.
    void nextTurn().then(() => {
      this.tickQueued = false;
      this.running = this.running
        .then(() => this.tick())
        .catch((err: unknown) => this.options.logger.error({ err }, "moving silent nodes' work failed"));
    });
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    this.timer?.cancel();
    this.timer = undefined;
    const { nodeViews, clock, policy, logger } = this.options;
    // A node back (or gone: its deletion's step acts) before its turn loses nothing here.
    for (const nodeId of [...this.waiting.keys()]) {
      const view = nodeViews.get(nodeId);
      if (view === undefined || view.deleted || view.membership === "REJECTED" || view.health === "HEALTHY") {
        this.waiting.delete(nodeId);
        logger.info({ nodeId, health: view?.health }, "a silent node came back (or left) before its work was moved");
      }
    }
    if (this.waiting.size === 0) return;
    const fleet = fleetHealthOf(nodeViews.all());
    const now = clock.now();
    const step = evictionStep([...this.waiting.keys()], fleet, policy, this.bucket, {
      now,
      transportDown: this.options.transportDown(),
      ...(this.graceUntil === undefined ? {} : { graceUntil: this.graceUntil }),
    });
    this.bucket = step.bucket;
    if (step.disruption !== this.lastDisruption) {
      const level = step.disruption === "normal" || step.disruption === "grace" ? "info" : "warn";
      logger[level](
        { disruption: step.disruption, rate: step.rate, ...fleet, waiting: step.waiting.length },
        "silent nodes' work moves at a new rate",
      );
      this.lastDisruption = step.disruption;
    }
    for (const nodeId of step.release) {
      const waiting = this.waiting.get(nodeId) as Waiting;
      this.waiting.delete(nodeId);
      const health = nodeViews.get(nodeId)?.health ?? "UNHEALTHY";
      const context = commandContext(NODE_REACTIONS_ACTOR, {
        reason: waiting.reason,
        ...(waiting.causationId === ""
          ? {}
          : { causationId: waiting.causationId, correlationId: waiting.correlationId }),
      });
      await this.options.work.loseNodeWork(nodeId, nodeLostMessage(nodeId, `became ${health}`), context);
    }
    if (this.waiting.size === 0 || this.stopped) return;
    const next = step.nextInMs ?? PAUSED_RECHECK_MS;
    this.timer = clock.setTimer(next, () => {
      this.timer = undefined;
      this.schedule();
    });
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }
}
