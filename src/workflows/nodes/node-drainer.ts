import { nodeDrainedMessage } from "../../scheduler/job-outcome.ts";
import { isNodeGain } from "../jobs/job-flow.ts";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import type { ExecutionCommand, ExecutionRefusal } from "../../../machines/execution/execution-commands.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { DrainLeftover } from "../../../machines/node/node-commands.ts";
import type { NodeDrain } from "../../../machines/node/node-state.ts";
import type { Clock } from "../../actors/clock.ts";
import { commandContext, type CommandContext } from "../../actors/command-context.ts";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { EntityRegistry } from "../../actors/entity-registry.ts";
import type { NodeManager } from "../../actors/node-manager.ts";
import { asShoalError } from "../../errors/shoal-error.ts";
import type { ExecutionEvent } from "../../events/catalog/execution-events.ts";
import { EXECUTION_CATEGORY, NODE_CATEGORY, categoryOf, entityIdOf } from "../../events/streams.ts";
import type { EventEnvelope } from "../../projections/event-envelope.ts";
import type { JobViews } from "../../projections/jobs/job-views.ts";
import type { NodeViews } from "../../projections/node-views.ts";
import type { Processor } from "../../projections/processor.ts";
import { isTerminal } from "../../scheduler/execution-states.ts";
import type { NodeWorkClient } from "../../transport/node-work-client.ts";
import type { WorkflowHandler } from "../workflow.ts";
import { DRAIN, DRAIN_ACTOR } from "./drain-flow.ts";

export interface NodeDrainerOptions {
  readonly manager: NodeManager;
  readonly nodeViews: NodeViews;
  readonly jobViews: JobViews;
  readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;
  readonly work: NodeWorkClient;
  /** Places a job (the jobs workflow's placement, serialized with every other): a service's replacements. */
  readonly place: (
    jobId: string,
    by: {
      readonly workflow: string;
      readonly reason: string;
      readonly causationId: string;
      readonly correlationId: string;
    },
  ) => Promise<void>;
  /** Whether another node would take a batch execution's partition now (a dry run): only then is it stopped to move. */
  readonly placeableElsewhere: (execution: ExecutionState) => Promise<boolean>;
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long a drain waits for the node read model (what placement reads) to show it; default 10 s. */
  readonly viewWaitMs?: number;
}

/** What caused an action: the recorded step's command, or an execution's change. */
interface Cause {
  readonly reason: string;
  readonly causationId: string;
  readonly correlationId: string;
}

const DRAIN_EVENTS_ENDING = new Set(["NodeDrainCompleted", "NodeDrainDeadlineReached", "NodeUndrained"]);

const stateOf = (e: ExecutionState) => ({
  id: e.executionId,
  nodeId: e.nodeId,
  state: e.computeState ?? "New",
  desiredState: e.desiredState ?? "Pending",
});
const ended = (e: ExecutionState): boolean => e.computeState === undefined || isTerminal(stateOf(e));

/**
 * Carries out the drain flow's commands (drain-flow.ts) and follows each drain under way to its
 * end: one pass (`progress`) looks at what still runs on the node and does what is due —
 * batch executions cancelled (the jobs workflow places their partitions on other nodes: a
 * draining node takes none), a service execution's replacement placed while it runs and the
 * original stopped once the replacement is Running, ops executions left to finish, daemon
 * executions stopped once nothing else is left (unless KeepDaemon) — and, when nothing is left,
 * completes the drain. Each pass reads the executions' actors, so a pass repeated (a replay after
 * a crash, the next execution's change) does only what is still due: nothing twice. Its deadline
 * is armed from the node's state (also at recovery); when it passes, what is left is named in
 * NodeDrainDeadlineReached and the flow stops each of them. Every action's actor is
 * `workflow-node-drain`, with a reason.
 */
export class NodeDrainer implements Processor {
  readonly name = "node-drain-progress";
  /** Nodes draining now (as far as this process has seen): an execution's change passes over them. */
  private readonly draining = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  /** Nodes with a pass queued that has not begun. */
  private readonly waiting = new Set<string>();

  constructor(private readonly options: NodeDrainerOptions) {}

  handlers(): Record<string, WorkflowHandler> {
    return {
      [DRAIN]: (c) => {
        const cause = { reason: c.reason, causationId: c.causationId, correlationId: c.correlationId };
        switch (c.type) {
          case "MoveDrainedWork":
            return this.serialized(() => this.progress(c.entityId, cause));
          case "StopDrainedExecution":
            return this.serialized(() => this.stopLeft(c.entityId, cause));
          case "SettleUndrained":
            return this.serialized(() => this.settleUndrained(c.entityId, cause));
          default:
            throw new Error(`the drain flow issued ${c.type}, which the drainer does not know`);
        }
      },
    };
  }

  /**
   * Follows the store (not recorded: the actions a pass takes carry their reasons): an execution's
   * change may let a drain go on (a replacement running, the last work ended), and a node's gain
   * may give its batch work somewhere to go, so every drain under way gets a pass; a drain's end
   * disarms its deadline.
   */
  handle(batch: readonly EventEnvelope[]): void {
    let changed: EventEnvelope | undefined;
    for (const e of batch) {
      const category = categoryOf(e.recorded.stream);
      if (category === EXECUTION_CATEGORY) changed = e;
      else if (category === NODE_CATEGORY) {
        const nodeId = entityIdOf(e.recorded.stream);
        const started = e.as("NodeDrainStarted");
        if (started) {
          this.draining.add(nodeId);
          this.arm(nodeId, Date.parse(started.data.Deadline));
        } else if (DRAIN_EVENTS_ENDING.has(e.recorded.type) || e.recorded.type === "NodeDeleted") this.disarm(nodeId);
        // Another node that may take work now: batch work left on a draining node for want of one may move.
        else if (isNodeGain(e.recorded.stream, e.recorded.type)) changed = e;
      }
    }
    if (changed === undefined || this.draining.size === 0) return;
    const { recorded } = changed;
    const cause = {
      reason: `${recorded.type} of ${entityIdOf(recorded.stream)}`,
      causationId: recorded.id,
      correlationId:
        typeof recorded.metadata.correlationId === "string" ? recorded.metadata.correlationId : recorded.id,
    };
    for (const nodeId of this.draining) this.later(nodeId, cause);
  }

  /**
   * After a restart: every drain under way is armed again and gets a pass (its deadline may have passed while the
   * orchestrator was down).
   */
  recover(): void {
    for (const view of this.options.nodeViews.all()) {
      if (view.deleted || view.drain?.status !== "draining") continue;
      this.draining.add(view.nodeId);
      this.arm(view.nodeId, Date.parse(view.drain.deadline));
      this.later(view.nodeId, {
        reason: "the orchestrator started while the node was draining",
        causationId: "",
        correlationId: "",
      });
    }
  }

  /** A pass for the node after those queued; one waiting pass per node is enough (it reads everything afresh). */
  private later(nodeId: string, cause: Cause): void {
    if (this.waiting.has(nodeId)) return;
    this.waiting.add(nodeId);
    this.serialized(() => {
      this.waiting.delete(nodeId);
      return this.progress(nodeId, cause);
    }).catch((err: unknown) =>
      this.options.logger.error({ err, nodeId }, "a drain's pass failed; the next change tries again"),
    );
  }

  private serialized(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private context(cause: Cause, reason = cause.reason): CommandContext {
    return commandContext(
      { type: "system", id: DRAIN_ACTOR },
      {
        reason,
        ...(cause.causationId ? { causationId: cause.causationId } : {}),
        ...(cause.correlationId ? { correlationId: cause.correlationId } : {}),
      },
    );
  }

  private arm(nodeId: string, at: number): void {
    this.options.deadlines.set(`node-drain/${nodeId}`, at, () => {
      this.serialized(() => this.expire(nodeId)).catch((err: unknown) =>
        this.options.logger.error({ err, nodeId }, "a drain's deadline failed"),
      );
    });
  }

  private disarm(nodeId: string): void {
    this.draining.delete(nodeId);
    this.options.deadlines.cancel(`node-drain/${nodeId}`);
  }

  /** The node's drain under way, from its actor (never behind the store), else undefined (its end disarms it here). */
  private async drainOf(nodeId: string): Promise<NodeDrain | undefined> {
    const drain = (await this.options.manager.nodeState(nodeId)).drain;
    if (drain?.status === "draining") return drain;
    this.disarm(nodeId);
    return undefined;
  }

  /** The node's executions under way, as their actors have them. */
  private async executionsOn(nodeId: string): Promise<ExecutionState[]> {
    const ids: string[] = [];
    for (const e of this.options.jobViews.allExecutions())
      if (e.nodeId === nodeId && !ended(e)) ids.push(e.executionId);
    const states = await Promise.all(ids.map(async (id) => (await this.options.executions.get(id)).state));
    return states.filter((e) => !ended(e));
  }

  /** Another execution of the same service partition, under way on another node: the replacement. */
  private async replacementOf(e: ExecutionState): Promise<ExecutionState | undefined> {
    for (const other of this.options.jobViews.executionsOfJob(e.jobId)) {
      if (
        other.executionId === e.executionId ||
        other.partitionIndex !== e.partitionIndex ||
        other.nodeId === e.nodeId ||
        ended(other)
      )
        continue;
      const state = (await this.options.executions.get(other.executionId)).state;
      if (!ended(state)) return state;
    }
    return undefined;
  }

  /**
   * Placement reads the node read model: it must show the drain before anything moves, so nothing comes back to the
   * node.
   */
  private async viewShowsDrain(nodeId: string): Promise<void> {
    const until = Date.now() + (this.options.viewWaitMs ?? 10_000);
    while (this.options.nodeViews.get(nodeId)?.drain?.status !== "draining") {
      if (Date.now() > until) throw new Error(`the node read model does not show node ${nodeId} draining`);
      await sleep(10);
    }
  }

  private async cancel(e: ExecutionState, context: CommandContext): Promise<boolean> {
    const reason = context.reason ?? "the node is draining";
    try {
      await this.options.executions.execute(e.executionId, { type: "Cancel", reason }, context);
    } catch (err) {
      if (asShoalError(err).kind !== "Conflict") throw err;
      return false;
    }
    this.options.work.cancelExecution(e.nodeId, e.executionId, reason.slice(0, 1024));
    return true;
  }

  /** One pass over a draining node: what is due now (see the class), then its end when nothing is left. */
  private async progress(nodeId: string, cause: Cause): Promise<void> {
    const drain = await this.drainOf(nodeId);
    if (drain === undefined) return;
    this.draining.add(nodeId);
    this.arm(nodeId, Date.parse(drain.deadline));
    await this.viewShowsDrain(nodeId);
    let left = 0;
    const daemons: ExecutionState[] = [];
    const toPlace = new Set<string>();
    for (const e of await this.executionsOn(nodeId)) {
      switch (e.jobType) {
        case "batch":
          // No node to take it: it runs on here (to its end, or the deadline) rather than its job failing for want of
          // one; a later pass tries again.
          if (await this.options.placeableElsewhere(e))
            await this.cancel(
              e,
              this.context(
                cause,
                `node ${nodeId} is draining: the execution is stopped and its partition placed on another node`,
              ),
            );
          else left++;
          break;
        case "service": {
          const replacement = await this.replacementOf(e);
          if (replacement === undefined) toPlace.add(e.jobId);
          if (replacement?.computeState === "Running") {
            await this.cancel(
              e,
              this.context(
                cause,
                `node ${nodeId} is draining: replaced by ${replacement.executionId} on node ${replacement.nodeId}, which is running`,
              ),
            );
          } else left++;
          break;
        }
        case "daemon":
          if (!drain.keepDaemon) daemons.push(e);
          break;
        default:
          // ops: let finish.
          left++;
      }
    }
    for (const jobId of toPlace) {
      await this.options.place(jobId, {
        workflow: DRAIN_ACTOR,
        reason: `node ${nodeId} is draining: a replacement starts before its execution stops`,
        causationId: cause.causationId,
        correlationId: cause.correlationId,
      });
    }
    if (left > 0) return;
    for (const d of daemons) await this.cancel(d, this.context(cause, nodeDrainedMessage(nodeId)));
    await this.options.manager.drainCommand(
      nodeId,
      { type: "CompleteDrain", daemonStopped: await this.daemonsStopped(nodeId, drain) },
      this.context(cause, "nothing the drain had to move is left on the node"),
    );
    this.disarm(nodeId);
    this.options.logger.info({ nodeId }, "drain completed");
  }

  /**
   * Daemon executions on the node cancelled since the drain started (their actors: the read model may not show this
   * pass's yet).
   */
  private async daemonsStopped(nodeId: string, drain: NodeDrain): Promise<number> {
    const since = Date.parse(drain.startedAt);
    const ids: string[] = [];
    for (const e of this.options.jobViews.allExecutions())
      if (e.nodeId === nodeId && e.jobType === "daemon") ids.push(e.executionId);
    const states = await Promise.all(ids.map(async (id) => (await this.options.executions.get(id)).state));
    return states.filter((e) => e.computeState === "Cancelled" && e.modifyTime >= since).length;
  }

  /**
   * The deadline came: what is left (kept daemon work aside) is named in NodeDrainDeadlineReached, and the flow stops
   * each.
   */
  private async expire(nodeId: string): Promise<void> {
    const drain = await this.drainOf(nodeId);
    if (drain === undefined) return;
    const at = Date.parse(drain.deadline);
    // Drained again meanwhile with a later deadline: that one is armed.
    if (at > this.options.clock.now()) return this.arm(nodeId, at);
    const left: DrainLeftover[] = (await this.executionsOn(nodeId))
      .filter((e) => !(e.jobType === "daemon" && drain.keepDaemon))
      .map((e) => ({ executionId: e.executionId, jobId: e.jobId, jobType: e.jobType ?? "batch" }));
    const context = this.context(
      { reason: "", causationId: "", correlationId: "" },
      `the drain deadline ${drain.deadline} passed with ${left.length} execution${left.length === 1 ? "" : "s"} left`,
    );
    await this.options.manager.drainCommand(nodeId, { type: "ExpireDrain", left }, context);
    this.disarm(nodeId);
    this.options.logger.info({ nodeId, left: left.length }, "drain deadline passed");
  }

  /** The flow's stop of one execution the deadline found left. */
  private async stopLeft(executionId: string, cause: Cause): Promise<void> {
    const e = (await this.options.executions.get(executionId)).state;
    if (ended(e)) return;
    await this.cancel(e, this.context(cause));
  }

  /**
   * An operator ended a drain under way: a service partition with both its original and a
   * replacement keeps one — the replacement when it already runs (the move is done), else the
   * original (the replacement is cancelled).
   */
  private async settleUndrained(nodeId: string, cause: Cause): Promise<void> {
    this.disarm(nodeId);
    if ((await this.options.manager.nodeState(nodeId)).drain !== undefined) return;
    for (const e of await this.executionsOn(nodeId)) {
      if (e.jobType !== "service") continue;
      const replacement = await this.replacementOf(e);
      if (replacement === undefined) continue;
      if (replacement.computeState === "Running")
        await this.cancel(
          e,
          this.context(
            cause,
            `the drain of node ${nodeId} ended; ${replacement.executionId} on node ${replacement.nodeId} already runs in its place`,
          ),
        );
      else
        await this.cancel(
          replacement,
          this.context(cause, `the drain of node ${nodeId} ended: the replacement of ${e.executionId} is not needed`),
        );
    }
  }
}
