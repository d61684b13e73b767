import type { Logger } from "pino";
import type { ExecutionCommand, ExecutionRefusal } from "../../../machines/execution/execution-commands.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { JobCommand, JobRefusal } from "../../../machines/job/job-commands.ts";
import { isLongRunning, taskOf, type JobSpec, type TaskSpec } from "../../../machines/job/job-spec.ts";
import { isTerminalJobState, type JobState } from "../../../machines/job/job-state.ts";
import { parseTaskResources } from "../../../machines/job/task-resources.ts";
import type { Clock } from "../../actors/clock.ts";
import { commandContext, type CommandContext } from "../../actors/command-context.ts";
import type { EntityRegistry } from "../../actors/entity-registry.ts";
import type { ExecutionEvent } from "../../events/catalog/execution-events.ts";
import type { JobEvent } from "../../events/catalog/job-events.ts";
import type { JobViews } from "../../projections/jobs/job-views.ts";
import type { NodeViews } from "../../projections/node-views.ts";
import { ledgerOf, type Allocation } from "../../scheduler/capacity-ledger.ts";
import { candidateNodeOf } from "../../scheduler/candidate-node.ts";
import { isTerminal } from "../../scheduler/execution-states.ts";
import { placeJob } from "../../scheduler/place-job.ts";
import type { ExistingExecution, PlacementRequest } from "../../scheduler/placement-request.ts";
import { fromBacalhauResources } from "../../scheduler/resources.ts";
import type { NodeWorkClient } from "../../transport/node-work-client.ts";
import type { WorkTask } from "../../transport/work-messages.ts";
import { deterministicId } from "../deterministic-id.ts";
import type { WorkflowCommand, WorkflowHandler } from "../workflow.ts";
import { CANCEL, DISPATCH, PLACEMENT, SETTLE } from "./job-flow.ts";

/** Seconds the orchestrator allows past an ExecutionTimeout before failing the execution itself (the node enforces it first). */
const TIMEOUT_BUFFER_SECONDS = 60;
/** An execution its node has not answered for is sent again this often, this many times (then the node's health decides). */
const RESEND_MS = 2_000;
const RESENDS = 30;
/** Compute states in which the node may not hold an execution's work yet. */
const NOT_YET_RUNNING = new Set(["New", "AskForBid", "AskForBidAccepted", "BidAccepted"]);

export interface JobRunnerOptions {
  readonly jobs: EntityRegistry<JobState, JobCommand, JobEvent, JobRefusal>;
  readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;
  readonly jobViews: JobViews;
  readonly nodeViews: NodeViews;
  readonly work: NodeWorkClient;
  readonly clock: Clock;
  readonly logger: Logger;
}

type Issued = Parameters<WorkflowHandler>[0];

const toExisting = (e: ExecutionState): ExistingExecution => ({
  id: e.executionId,
  nodeId: e.nodeId,
  state: e.computeState ?? "New",
  desiredState: e.desiredState ?? "Pending",
  partitionIndex: e.partitionIndex,
});

const allocationOf = (e: ExecutionState): Allocation => ({ nodeId: e.nodeId, resources: fromBacalhauResources(e.allocatedResources) });

/** Bacalhau's network types as the work protocol carries them: Default is the node's choice, which Shoal makes None. */
function workNetwork(task: TaskSpec): WorkTask["Network"] {
  switch (task.Network.Type) {
    case "Host":
    case "Full":
    case "HTTP":
      return task.Network.Type;
    case "Bridge":
      return "Full";
    default:
      return "None";
  }
}

export function workTaskOf(spec: JobSpec, execution: ExecutionState): WorkTask {
  const task = taskOf(spec);
  const p = task.Engine.Params;
  const r = parseTaskResources(task.Resources);
  return {
    Engine: {
      Type: "docker",
      Image: p.Image,
      ...(p.Entrypoint.length > 0 ? { Entrypoint: p.Entrypoint } : {}),
      ...(p.Parameters.length > 0 ? { Parameters: p.Parameters } : {}),
      ...(p.EnvironmentVariables.length > 0 ? { EnvironmentVariables: p.EnvironmentVariables } : {}),
      ...(p.WorkingDirectory !== "" ? { WorkingDirectory: p.WorkingDirectory } : {}),
    },
    ...(Object.keys(task.Env).length > 0 ? { Env: task.Env } : {}),
    Resources: { CPUMillis: Math.max(1, Math.round(r.CPU * 1000)), MemoryBytes: Math.max(1, Math.round(r.Memory)) },
    Network: workNetwork(task),
    ExecutionTimeout: execution.executionTimeout,
  };
}

/**
 * Carries out the job flow's commands (job-flow.ts): placement through the pure scheduler, one
 * placement at a time so that two jobs never take the same capacity; dispatch of new executions
 * to their nodes; a job's end once its executions ended; cancelling a stopped job's executions.
 * Every command it issues is idempotent: execution ids are derived from the job, its revision
 * (the placement round) and the partition or node, so a replayed step creates nothing new.
 */
export class JobRunner {
  /** Placements, one after another. */
  private queue: Promise<void> = Promise.resolve();
  /** Executions created here that the read model may not show yet, per job: counted in the ledger and the job's executions. */
  private readonly created = new Map<string, Set<string>>();

  constructor(private readonly options: JobRunnerOptions) {}

  handlers(): Record<string, WorkflowHandler> {
    return {
      [PLACEMENT]: (c) => (c.type === "PlaceJob" ? this.serialized(() => this.place(c.entityId, c)) : this.serialized(() => this.placeQueued(c))),
      [DISPATCH]: (c) => this.dispatch(c.entityId),
      [SETTLE]: (c) => this.settle(c.entityId, c),
      [CANCEL]: (c) => this.cancel(c.entityId, c),
    };
  }

  /** Tries the Queued jobs again (QueueBackoff, a node that can take more): outside any workflow step, so its context says why. */
  retryQueued(reason = "queue backoff"): Promise<void> {
    const c = { handler: PLACEMENT, entityId: "", type: "PlaceQueuedJobs", reason, commandId: deterministicId("queue-retry", reason, String(this.options.clock.now())), causationId: "", correlationId: "" };
    return this.serialized(() => this.placeQueued(c));
  }

  /**
   * After a restart: the work of every execution its node may not have yet (not Running, not
   * ended) goes to dispatch again, which sends what its state calls for. The workflow's checkpoint
   * can be past their ExecutionCreated step (saved once the step acted), so no replay sends it,
   * and the resends of the process that died died with it: without this a kill -9 left such an
   * execution New, its job Running, for ever. Read-model states pick them, so a restart with many
   * running executions loads none of their actors.
   */
  resumeDispatch(executions: Iterable<ExecutionState>): void {
    for (const e of executions) {
      if (!NOT_YET_RUNNING.has(e.computeState ?? "New")) continue;
      this.dispatch(e.executionId).catch((err: unknown) => this.options.logger.warn({ err, executionId: e.executionId }, "sending an execution again after a restart failed"));
    }
  }

  private serialized(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private context(c: WorkflowCommand & Partial<Pick<Issued, "commandId" | "causationId" | "correlationId">>): CommandContext {
    return commandContext({ type: "system", id: "workflow-jobs" }, { reason: c.reason, ...(c.causationId ? { causationId: c.causationId } : {}), ...(c.correlationId ? { correlationId: c.correlationId } : {}) });
  }

  private async executionsOf(jobId: string): Promise<ExecutionState[]> {
    const ids = new Set(this.options.jobViews.executionsOfJob(jobId).map((e) => e.executionId));
    for (const id of this.created.get(jobId) ?? []) ids.add(id);
    return Promise.all([...ids].map(async (id) => (await this.options.executions.get(id)).state));
  }

  private ledger() {
    const { jobViews } = this.options;
    const allocations: Allocation[] = [];
    for (const e of jobViews.allExecutions()) if (!isTerminal(toExisting(e))) allocations.push(allocationOf(e));
    for (const [jobId, ids] of this.created) {
      for (const id of ids) {
        if (jobViews.execution(id) !== undefined) ids.delete(id);
        else {
          const actor = this.options.executions.peek(id);
          if (actor && !isTerminal(toExisting(actor.state))) allocations.push(allocationOf(actor.state));
        }
      }
      if (ids.size === 0) this.created.delete(jobId);
    }
    return ledgerOf(allocations);
  }

  private async placeQueued(c: Issued): Promise<void> {
    const queued = [...this.options.jobViews.allJobs()].filter((j) => j.state === "Queued").map((j) => j.jobId);
    for (const jobId of queued) await this.place(jobId, c);
  }

  private async place(jobId: string, c: Issued): Promise<void> {
    const { jobs, executions, nodeViews, clock, logger } = this.options;
    const job = (await jobs.get(jobId)).state;
    const spec = job.spec;
    if (spec === undefined || job.state === undefined || isTerminalJobState(job.state)) return;
    if (job.state === "Running" && spec.Type !== "daemon") return;
    const task = taskOf(spec);
    const existing = await this.executionsOf(jobId);
    const request: PlacementRequest = {
      jobId,
      type: spec.Type,
      count: spec.Count,
      constraints: spec.Constraints.map((r) => ({ key: r.Key, operator: r.Operator, values: r.Values })),
      engine: task.Engine.Type,
      resources: fromBacalhauResources(parseTaskResources(task.Resources)),
      executions: existing.map(toExisting),
      nodes: nodeViews.all().map(candidateNodeOf),
      queue: { timeoutMs: task.Timeouts.QueueTimeout * 1000, createdAtMs: job.createTime, nowMs: clock.now() },
    };
    const result = placeJob(request, this.ledger());
    const context = this.context(c);
    const timeout = isLongRunning(spec.Type) ? 0 : task.Timeouts.ExecutionTimeout || task.Timeouts.TotalTimeout;
    const allocated = parseTaskResources(task.Resources);
    for (const p of result.placements) {
      // The placement round is the job's revision: a replay of this step makes the same ids.
      const executionId = `e-${deterministicId("placement", jobId, String(job.revision), p.partitionIndex === undefined ? p.nodeId : String(p.partitionIndex))}`;
      let ids = this.created.get(jobId);
      if (!ids) this.created.set(jobId, (ids = new Set()));
      ids.add(executionId);
      await executions.execute(
        executionId,
        {
          type: "Create",
          jobId,
          namespace: spec.Namespace,
          nodeId: p.nodeId,
          jobType: spec.Type,
          jobVersion: job.version,
          partitionIndex: p.partitionIndex ?? 0,
          resources: allocated,
          executionTimeout: timeout,
          timeoutBuffer: TIMEOUT_BUFFER_SECONDS,
        },
        context,
      );
    }
    logger.info({ jobId, decision: result.decision, placements: result.placements.map((p) => p.nodeId) }, "job placed");
    if (result.decision === "failed") await jobs.execute(jobId, { type: "Fail", reason: result.message ?? "the job cannot be placed" }, context);
    else if (result.decision === "queued" && result.jobQueued === true) await jobs.execute(jobId, { type: "Queue", reason: result.message ?? "" }, context);
    else if (result.placements.length > 0) await jobs.execute(jobId, { type: "Run" }, context);
  }

  /**
   * Sends a new execution to its node: RunExecution, which the node answers with its bid, start
   * and end. Nothing is answered on the spot, and a node that has only just joined may not listen
   * yet: while the execution is still New the same message goes again (the node answers a repeat
   * with where it stands), every RESEND_MS, at most RESENDS times.
   */
  private async dispatch(executionId: string, attempt = 0): Promise<void> {
    const execution = (await this.options.executions.get(executionId)).state;
    // Only a New one: past that the node has it (a replay after a restart sends nothing again).
    if (execution.computeState !== "New") return;
    const job = (await this.options.jobs.get(execution.jobId)).state;
    if (job.spec === undefined || job.state === undefined || isTerminalJobState(job.state)) return;
    this.options.work.runExecution({ nodeId: execution.nodeId, executionId, jobId: execution.jobId, task: workTaskOf(job.spec, execution) });
    if (attempt < RESENDS) {
      const timer = setTimeout(() => {
        this.dispatch(executionId, attempt + 1).catch((err: unknown) => this.options.logger.warn({ err, executionId }, "sending an execution again failed"));
      }, RESEND_MS);
      timer.unref();
    }
  }

  /** A batch or ops job whose executions all ended: Completed when each succeeded, else Failed with the first failure. */
  private async settle(executionId: string, c: Issued): Promise<void> {
    const { jobs } = this.options;
    const ended = (await this.options.executions.get(executionId)).state;
    if (ended.jobId === "") return;
    const job = (await jobs.get(ended.jobId)).state;
    if (job.spec === undefined || job.state === undefined || isTerminalJobState(job.state) || isLongRunning(job.spec.Type)) return;
    const all = await this.executionsOf(job.jobId);
    if (all.length === 0 || all.some((e) => !isTerminal(toExisting(e)))) return;
    const failed = all.find((e) => e.computeState !== "Completed");
    const completed = all.filter((e) => e.computeState === "Completed").length;
    const enough = job.spec.Type === "ops" ? failed === undefined : completed >= job.spec.Count;
    const context = this.context(c);
    if (enough) await jobs.execute(job.jobId, { type: "Complete" }, context);
    else await jobs.execute(job.jobId, { type: "Fail", reason: failureOf(failed as ExecutionState) }, context);
  }

  /** A job that ended: its executions still under way are cancelled, and their nodes told to stop them. */
  private async cancel(jobId: string, c: Issued): Promise<void> {
    const job = (await this.options.jobs.get(jobId)).state;
    const reason = job.message || "the job ended";
    for (const e of await this.executionsOf(jobId)) {
      if (isTerminal(toExisting(e))) continue;
      await this.options.executions.execute(e.executionId, { type: "Cancel", reason }, this.context(c));
      this.options.work.cancelExecution(e.nodeId, e.executionId, reason.slice(0, 1024));
    }
  }
}

/** The job's failure as its history shows it: which execution, where, why, and the command's exit code when it ran. */
function failureOf(e: ExecutionState): string {
  const why = e.computeMessage || e.computeState || "failed";
  const exit = e.runOutput === undefined ? "" : ` (exit code ${e.runOutput.ExitCode})`;
  return `execution ${e.executionId} on node ${e.nodeId} ${e.computeState === "Failed" ? "failed" : "ended"}: ${why}${exit}`;
}
