import { nodeDrainedMessage } from "../../scheduler/job-outcome.ts";
import { isNodeGain } from "../jobs/job-flow.ts";
import type { PlacementBy } from "../jobs/placement-by.ts";
import type { Logger } from "pino";
import { drainDeadline } from "../../../machines/drain/drain-deadline.ts";
import { daemonsStopped, drainPass } from "../../../machines/drain/drain-pass.ts";
import { drainDeadlineAt, drainUnderWay } from "../../../machines/drain/drain-under-way.ts";
import type { DrainCancel, DrainedExecution } from "../../../machines/drain/drained-execution.ts";
import {
  DRAIN_ENDING_EVENTS,
  evolveDrainingNodes,
  initialDrainingNodes,
  withDrainingNode,
  withoutDrainingNode,
} from "../../../machines/drain/draining-nodes.ts";
import { isUnderWay } from "../../../machines/drain/execution-under-way.ts";
import { isReplacementOf } from "../../../machines/drain/replacement-of.ts";
import { settleUndrained } from "../../../machines/drain/settle-undrained.ts";
import type { ExecutionCommand, ExecutionRefusal } from "../../../machines/execution/execution-commands.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
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
import type { Processor, ProcessorProgress } from "../../projections/processor.ts";
import type { WorkClient } from "../../transport/node-work-client.ts";
import { READ_YOUR_WRITES_TIMEOUT_MS } from "../read-your-writes-timeout.ts";
import type { WorkflowHandler } from "../workflow.ts";
import { DRAIN, DRAIN_ACTOR, DRAIN_ID_SEED } from "./drain-flow.ts";

export interface NodeDrainerOptions {
  readonly manager: NodeManager;
  readonly nodeViews: NodeViews;
  /** The node read model's processor: a pass waits until it has folded the drain's start (placement reads it). */
  readonly nodeViewsProgress: Pick<ProcessorProgress, "waitFor">;
  readonly jobViews: JobViews;
  readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;
  readonly work: WorkClient;
  /** Places a job (the jobs workflow's placement, serialized with every other): a service's replacements. */
  readonly place: (jobId: string, by: PlacementBy) => Promise<void>;
  /** Whether another node would take a batch execution's partition now (a dry run): only then is it stopped to move. */
  readonly placeableElsewhere: (execution: ExecutionState) => Promise<boolean>;
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long a drain waits for the node read model (what placement reads) to show it (read-your-writes). */
  readonly viewWaitMs?: number;
}

/** What caused an action: the recorded step's command, or an execution's change. */
interface Cause {
  readonly reason: string;
  readonly causationId: string;
  readonly correlationId: string;
}

/**
 * Carries out the drain flow's commands (drain-flow.ts) and follows each drain under way to its end. The rules are
 * machines/drain's, pure; this is their host: it gathers what they need (the node's drain from its actor, the
 * executions under way on the node from theirs, whether each batch execution's partition is placeable elsewhere,
 * each service execution's replacement), asks them for a plan and issues it through the execution actors, the
 * placement and the node manager. One pass (`progress`): drainPass. Each pass reads the actors afresh, so a pass
 * repeated (a replay after a crash, the next execution's change) does only what is still due: nothing twice. Which
 * nodes drain comes from the node events (evolveDrainingNodes). Its deadline is armed on the deadline scheduler from
 * the node's state (also at recovery); when it passes, drainDeadline names what is left in NodeDrainDeadlineReached
 * and the flow stops each of them. Every action's actor is `workflow:node-drain`, with a reason.
 */
export class NodeDrainer implements Processor {
  readonly name = "node-drain-progress";
  /** Nodes draining now (as far as this process has seen): an execution's change passes over them. */
  private draining = initialDrainingNodes();
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
            return this.serialized(() => this.progress(c.entityId, cause, c.causationPosition));
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
        const { type, position } = e.recorded;
        this.draining = evolveDrainingNodes(this.draining, { type, nodeId, position });
        const started = e.as("NodeDrainStarted");
        if (started) this.arm(nodeId, Date.parse(started.data.Deadline));
        else if (DRAIN_ENDING_EVENTS.has(type)) this.disarm(nodeId);
        // Another node that may take work now: batch work left on a draining node for want of one may move.
        else if (isNodeGain(e.recorded.stream, type)) changed = e;
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
    for (const nodeId of this.draining.keys()) this.later(nodeId, cause);
  }

  /**
   * After a restart: every drain under way is armed again and gets a pass (its deadline may have passed while the
   * orchestrator was down).
   */
  recover(): void {
    for (const view of this.options.nodeViews.all()) {
      if (view.deleted || view.drain?.status !== "draining") continue;
      // The read model these come from shows the drain already: nothing to wait for.
      this.draining = withDrainingNode(this.draining, view.nodeId, 0);
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
    return commandContext(DRAIN_ACTOR, {
      reason,
      ...(cause.causationId ? { causationId: cause.causationId } : {}),
      ...(cause.correlationId ? { correlationId: cause.correlationId } : {}),
    });
  }

  private arm(nodeId: string, at: number): void {
    this.options.deadlines.set(`node-drain/${nodeId}`, at, () => {
      this.serialized(() => this.expire(nodeId)).catch((err: unknown) =>
        this.options.logger.error({ err, nodeId }, "a drain's deadline failed"),
      );
    });
  }

  /** The drain ended (or is not under way, as the node's actor shows): no deadline, no more passes. */
  private disarm(nodeId: string): void {
    this.draining = withoutDrainingNode(this.draining, nodeId);
    this.options.deadlines.cancel(`node-drain/${nodeId}`);
  }

  /** The node's drain under way, from its actor (never behind the store), else undefined (its end disarms it here). */
  private async drainOf(nodeId: string): Promise<NodeDrain | undefined> {
    const drain = drainUnderWay((await this.options.manager.nodeState(nodeId)).drain);
    if (drain === undefined) this.disarm(nodeId);
    return drain;
  }

  /**
   * The node's executions under way, as their actors have them: those the job read model indexes under the node
   * (JobViews.byNode, whose count the node's REST answer shows as Drain.ExecutionsLeft), each read from its actor.
   */
  private async executionsOn(nodeId: string): Promise<ExecutionState[]> {
    const ids = this.options.jobViews.byNode.underWayOn(nodeId).map((e) => e.executionId);
    const states = await Promise.all(ids.map(async (id) => (await this.options.executions.get(id)).state));
    return states.filter(isUnderWay);
  }

  /** Another execution of the same service partition and version (or a later one), under way on another node. */
  private async replacementOf(e: ExecutionState): Promise<ExecutionState | undefined> {
    for (const other of this.options.jobViews.executionsOfJob(e.jobId)) {
      if (!isReplacementOf(other, e)) continue;
      const state = (await this.options.executions.get(other.executionId)).state;
      if (isReplacementOf(state, e)) return state;
    }
    return undefined;
  }

  /** What a pass needs to know of each execution: batch work's chance elsewhere, a service's replacement. */
  private async gather(executions: readonly ExecutionState[]): Promise<DrainedExecution[]> {
    const gathered: DrainedExecution[] = [];
    for (const execution of executions) {
      if (execution.jobType === "batch")
        gathered.push({ execution, placeableElsewhere: await this.options.placeableElsewhere(execution) });
      else if (execution.jobType === "service") {
        const replacement = await this.replacementOf(execution);
        gathered.push(replacement === undefined ? { execution } : { execution, replacement });
      } else gathered.push({ execution });
    }
    return gathered;
  }

  /**
   * Placement reads the node read model: it must show the drain before anything moves, so nothing comes back to the
   * node. It has once it has folded the drain's start (`shownFrom`, its store position). False when it then shows the
   * drain ended, as the node's actor does: nothing is left to do.
   */
  private async viewShowsDrain(nodeId: string, shownFrom: number | undefined): Promise<boolean> {
    const waitMs = this.options.viewWaitMs ?? READ_YOUR_WRITES_TIMEOUT_MS;
    await this.options.nodeViewsProgress.waitFor(shownFrom, waitMs);
    if (this.options.nodeViews.get(nodeId)?.drain?.status === "draining") return true;
    if ((await this.drainOf(nodeId)) === undefined) return false;
    throw new Error(`the node read model does not show node ${nodeId} draining`);
  }

  private async cancel({ execution: e, reason }: DrainCancel, cause: Cause): Promise<boolean> {
    try {
      await this.options.executions.execute(e.executionId, { type: "Cancel", reason }, this.context(cause, reason));
    } catch (err) {
      if (asShoalError(err).kind !== "Conflict") throw err;
      return false;
    }
    this.options.work.cancelExecution(e.nodeId, e.executionId, reason.slice(0, 1024));
    return true;
  }

  /**
   * One pass over a draining node: drainPass's plan, issued in its order — executions stopped, replacements placed,
   * and when nothing is left its daemon work stopped and the drain completed. `shownFrom`: the store position of the
   * drain's start, when the caller knows it (the flow's command); else the one the node events gave.
   */
  private async progress(nodeId: string, cause: Cause, shownFrom?: number): Promise<void> {
    const drain = await this.drainOf(nodeId);
    if (drain === undefined) return;
    if (shownFrom !== undefined) this.draining = withDrainingNode(this.draining, nodeId, shownFrom);
    this.arm(nodeId, drainDeadlineAt(drain));
    if (!(await this.viewShowsDrain(nodeId, shownFrom ?? this.draining.get(nodeId)))) return;
    const plan = drainPass({ nodeId, drain, executions: await this.gather(await this.executionsOn(nodeId)) });
    for (const c of plan.cancel) await this.cancel(c, cause);
    for (const { jobId, reason } of plan.place) {
      await this.options.place(jobId, {
        actor: DRAIN_ACTOR,
        idSeed: DRAIN_ID_SEED,
        reason,
        causationId: cause.causationId,
        correlationId: cause.correlationId,
      });
    }
    if (plan.end === undefined) return;
    const message = nodeDrainedMessage(nodeId);
    for (const execution of plan.end.daemons) await this.cancel({ execution, reason: message }, cause);
    await this.options.manager.drainCommand(
      nodeId,
      { type: "CompleteDrain", daemonStopped: daemonsStopped(drain, await this.daemonExecutionsOn(nodeId)) },
      this.context(cause, plan.end.complete),
    );
    this.disarm(nodeId);
    this.options.logger.info({ nodeId }, "drain completed");
  }

  /** Every daemon execution of the node, ended ones too, from their actors (the read model may lag this pass). */
  private async daemonExecutionsOn(nodeId: string): Promise<ExecutionState[]> {
    const ids: string[] = [];
    for (const e of this.options.jobViews.allExecutions())
      if (e.nodeId === nodeId && e.jobType === "daemon") ids.push(e.executionId);
    return Promise.all(ids.map(async (id) => (await this.options.executions.get(id)).state));
  }

  /**
   * The deadline came: what is left (kept daemon work aside) is named in NodeDrainDeadlineReached, and the flow stops
   * each.
   */
  private async expire(nodeId: string): Promise<void> {
    const drain = await this.drainOf(nodeId);
    if (drain === undefined) return;
    const outcome = drainDeadline(drain, await this.executionsOn(nodeId), this.options.clock.now());
    // Drained again meanwhile with a later deadline: that one is armed.
    if (outcome.type === "later") return this.arm(nodeId, outcome.at);
    const context = this.context({ reason: "", causationId: "", correlationId: "" }, outcome.reason);
    await this.options.manager.drainCommand(nodeId, { type: "ExpireDrain", left: outcome.left }, context);
    this.disarm(nodeId);
    this.options.logger.info({ nodeId, left: outcome.left.length }, "drain deadline passed");
  }

  /** The flow's stop of one execution the deadline found left. */
  private async stopLeft(executionId: string, cause: Cause): Promise<void> {
    const execution = (await this.options.executions.get(executionId)).state;
    if (!isUnderWay(execution)) return;
    await this.cancel({ execution, reason: cause.reason }, cause);
  }

  /** An operator ended a drain under way: settleUndrained's cancels (what a cut-short move left half done). */
  private async settleUndrained(nodeId: string, cause: Cause): Promise<void> {
    this.disarm(nodeId);
    const drain = (await this.options.manager.nodeState(nodeId)).drain;
    if (drain !== undefined) return;
    const services = (await this.executionsOn(nodeId)).filter((e) => e.jobType === "service");
    for (const c of settleUndrained(nodeId, drain, await this.gather(services))) await this.cancel(c, cause);
  }
}
