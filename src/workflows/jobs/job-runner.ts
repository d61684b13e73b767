import type { Logger } from "pino";
import type { ExecutionCommand, ExecutionRefusal } from "../../../machines/execution/execution-commands.ts";
import { endedUnanswered } from "../../../machines/execution/execution-deadlines.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { JobCommand, JobRefusal } from "../../../machines/job/job-commands.ts";
import type { JobSpec } from "../../../machines/job/job-spec.ts";
import { isTerminalJobState, type JobState } from "../../../machines/job/job-state.ts";
import type { Clock } from "../../actors/clock.ts";
import { commandContext, type CommandContext } from "../../actors/command-context.ts";
import type { DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { EntityRegistry } from "../../actors/entity-registry.ts";
import type { Actor } from "../../events/catalog/event-metadata.ts";
import type { ExecutionEvent } from "../../events/catalog/execution-events.ts";
import type { JobEvent } from "../../events/catalog/job-events.ts";
import type { EventEnvelope } from "../../projections/event-envelope.ts";
import type { JobViews } from "../../projections/jobs/job-views.ts";
import { EXECUTION_CATEGORY, categoryOf, entityIdOf } from "../../events/streams.ts";
import type { NodeViews } from "../../projections/node-views.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import type { CapacityLedger } from "../../scheduler/capacity-ledger.ts";
import { candidateNodeOf } from "../../scheduler/candidate-node.ts";
import type { FleetView } from "../../scheduler/fleet/fleet-view.ts";
import { isTerminal } from "../../scheduler/execution-states.ts";
import { evaluateJob } from "../../scheduler/evaluate-job.ts";
import { toExisting } from "../../scheduler/existing-execution.ts";
import { jobEndPlan } from "../../scheduler/job-end-plan.ts";
import type { PlacementPlan } from "../../scheduler/job-plan.ts";
import type { ExecutionRateLimit } from "../../scheduler/outdated-executions.ts";
import { nodeUnmatchedMessage, releasesNode, wantsPlacement } from "../../scheduler/job-outcome.ts";
import { FAVOUR_PREFIX, formatConstraint, jobSelectors } from "../../scheduler/job-constraints.ts";
import { matchesLabels, matchesRequirement } from "../../labels/label-selector.ts";
import type { JobType } from "../../scheduler/placement-request.ts";
import { fromBacalhauResources } from "../../scheduler/resources.ts";
import { placeJob } from "../../scheduler/place-job.ts";
import { placementRequestOf } from "../../scheduler/placement-request-of.ts";
import type { ConstraintRequirement, ExistingExecution, PlacementRequest } from "../../scheduler/placement-request.ts";
import type { WorkClient } from "../../transport/node-work-client.ts";
import { deterministicId } from "../../events/store/deterministic-id.ts";
import type { WorkflowCommand, WorkflowHandler } from "../workflow.ts";
import { applyJobPlan, type JobPlanStep } from "./apply-job-plan.ts";
import { BidApprover } from "./bid-approver.ts";
import { CoalescedPasses } from "./coalesced-passes.ts";
import { ExecutionLedger } from "./execution-ledger.ts";
import { APPROVAL, CANCEL, DISPATCH, JOBS_ACTOR, PLACEMENT, SETTLE } from "./job-flow.ts";
import { isTransientFailure } from "../transient-failure.ts";
import { endFailedJobStep } from "./failed-job-step.ts";
import { JobViewsWrites } from "./job-views-writes.ts";
import { KeyedQueues } from "../keyed-queues.ts";
import { LoopSlices } from "../loop-slices.ts";
import { LostWorkStops } from "./lost-work-stops.ts";
import { type PlacementBy, placementCommandId } from "./placement-by.ts";
import { WorkDispatch } from "./work-dispatch.ts";
import type { WorkResends } from "./work-resends.ts";

export interface JobRunnerOptions {
  readonly jobs: EntityRegistry<JobState, JobCommand, JobEvent, JobRefusal>;
  readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;
  readonly jobViews: JobViews;
  /**
   * The job read model's processor: a job is evaluated only once it has folded everything the runner appended (and
   * the step's cause), so the read model alone says which executions a job has.
   */
  readonly jobViewsProgress: Pick<ProcessorProgress, "waitFor">;
  readonly nodeViews: NodeViews;
  /** The cluster's nodes as placement reads them now, indexed (PlacementFleet): not rebuilt per placement. */
  readonly fleet: () => FleetView;
  readonly work: WorkClient;
  readonly clock: Clock;
  /**
   * The orchestrator's one deadline heap: nodes told again to stop lost work, and a job's placement follow-ups (the
   * rate limit's next evaluation, a top-up) wait in it.
   */
  readonly deadlines: DeadlineScheduler;
  readonly logger: Logger;
  /** How long a node may leave an execution's work unanswered (recorded on each one); else the decider's default. */
  readonly answerTimeoutMs?: number;
  /**
   * At most how many executions one evaluation of a job creates, and stops of its earlier versions' running ones
   * (Orchestrator.Scheduler.MaxExecutionsPerEval, ExecutionLimitBackoff); else Bacalhau's 20 per 100 ms.
   */
  readonly rateLimit?: ExecutionRateLimit;
  /** The orchestrator's chains of work sent again until answered (WorkDispatch's; the cancels' are in the same). */
  readonly resends: WorkResends;
  /** Why a stored job breaks today's limits (it fails with that reason, never placed); undefined: it does not. */
  readonly refusal?: (jobId: string, spec: JobSpec) => string | undefined;
  /**
   * Told of each execution placed (its Create stored, not a replayed one's): its job's type, and the time since the
   * job's submission when the job had no execution before (its first placement), else undefined.
   */
  readonly placed?: (type: JobType, sinceSubmissionMs: number | undefined) => void;
}

type Issued = Parameters<WorkflowHandler>[0];

/**
 * How long evaluations may run back to back before the event loop gets a turn: a placement is 0.5–6 ms of CPU here
 * (1,000 to 10,000 nodes), so a heartbeat or request waits at most about this plus one placement behind a burst.
 */
const PLACEMENT_SLICE_MS = 10;

/** One pass over the Queued jobs: why (the latest request's context), and which nodes gained (undefined: any). */
interface QueuedPass {
  readonly c: Issued;
  readonly gainedNodes: ReadonlySet<string> | undefined;
}

/** Requests joined into one pass: the latest one's context, the furthest cause, the union of the nodes that gained. */
function joinPasses(queued: QueuedPass, joining: QueuedPass): QueuedPass {
  const cause = Math.max(queued.c.causationPosition ?? 0, joining.c.causationPosition ?? 0);
  return {
    c: { ...joining.c, ...(cause > 0 ? { causationPosition: cause } : {}) },
    gainedNodes:
      queued.gainedNodes === undefined || joining.gainedNodes === undefined
        ? undefined
        : new Set([...queued.gainedNodes, ...joining.gainedNodes]),
  };
}

/**
 * Carries out the job flow's commands (job-flow.ts): placement through the pure scheduler; dispatch of new executions
 * to their nodes; a job's end once its executions ended; cancelling a stopped job's executions. A job's commands run
 * one after another (KeyedQueues), different jobs' concurrently: two jobs never take the same capacity because each
 * placement reads the ledger, decides and reserves what it creates in one synchronous section (evaluate).
 * Every command it issues is idempotent: execution ids are derived from the job, its revision
 * (the placement round) and the partition or node, so a replayed step creates nothing new.
 */
export class JobRunner {
  /** Each job's placements, approvals, settles and cancels, one after another; different jobs' concurrently. */
  private readonly queues = new KeyedQueues();
  /**
   * What a node's loss or label change does to its executions (loseNodeWork, checkDaemonMatch), one after another per
   * node: two of them never both find an execution under way and both end it (the second would be refused).
   */
  private readonly nodeWork = new KeyedQueues();
  /** The passes over the Queued jobs, one at a time, requests made while one waits joined into it. */
  private readonly passes = new CoalescedPasses<QueuedPass>((p) => this.placeQueued(p.c, p.gainedNodes), joinPasses);
  /** Evaluations take turns with the rest of the event loop (LoopSlices): a burst of them never starves I/O. */
  private readonly slices = new LoopSlices(PLACEMENT_SLICE_MS);
  /** What the runner appended, for the read model to fold before a job is evaluated from it. */
  private readonly writes: JobViewsWrites;
  /** Work sent to nodes and sent again until answered. */
  private readonly dispatcher: WorkDispatch;
  /** Nodes that came back told, and told again, to stop what was lost with them. */
  private readonly lostStops: LostWorkStops;

  private readonly approver: BidApprover;
  /**
   * What every execution of the read model holds (readModelFolded keeps it up to date), and what every placement
   * planned and the read model has not folded yet: reserved when the plan is made (evaluate), replaced by the read
   * model's fold of the execution, given back if its Create was not stored.
   */
  private readonly held: ExecutionLedger;

  constructor(private readonly options: JobRunnerOptions) {
    this.held = ExecutionLedger.of(options.jobViews.allExecutions());
    this.writes = new JobViewsWrites(options.jobViewsProgress);
    this.approver = new BidApprover({ executions: options.executions, work: options.work, logger: options.logger });
    this.dispatcher = new WorkDispatch(options);
    this.lostStops = new LostWorkStops(options);
  }

  handlers(): Record<string, WorkflowHandler> {
    return {
      [PLACEMENT]: (c) =>
        c.type === "PlaceJob" ? this.place(c.entityId, c) : this.passes.request({ c, gainedNodes: undefined }),
      [DISPATCH]: (c) => this.dispatcher.dispatch(c.entityId),
      [APPROVAL]: (c) => this.forExecution(c.entityId, () => this.approve(c.entityId, c)),
      [SETTLE]: (c) => this.forExecution(c.entityId, () => this.settle(c.entityId, c)),
      // In the job's queue: a placement's Create under way is stored (and its write known) before the job's executions
      // are read, so none is left running.
      [CANCEL]: (c) => this.queues.run(c.entityId, () => this.cancel(c.entityId, c)),
    };
  }

  /**
   * Tries the Queued jobs again (QueueBackoff, a node that can take more): outside any workflow
   * step, so its context says why. `gainedNodes`: only these nodes changed, so only the jobs one
   * of them could take are evaluated (see placeQueued).
   */
  retryQueued(reason = "queue backoff", gainedNodes?: ReadonlySet<string>): Promise<void> {
    const c = {
      handler: PLACEMENT,
      entityId: "",
      type: "PlaceQueuedJobs",
      reason,
      commandId: deterministicId("queue-retry", reason, String(this.options.clock.now())),
      causationId: "",
      correlationId: "",
    };
    return this.passes.request({ c, gainedNodes });
  }

  /** After a restart: the work of every execution its node may not hold yet goes out again (WorkDispatch.resume). */
  resumeDispatch(executions: Iterable<ExecutionState>): void {
    this.dispatcher.resume(executions);
  }

  /**
   * Work on an execution, in its job's queue: the job id is the execution actor's (in memory once the step's cause
   * loaded it), since only ExecutionCreated carries it. An execution with no job runs as it is (there is nothing to
   * order it with).
   */
  private async forExecution(executionId: string, work: () => Promise<void>): Promise<void> {
    const { jobId } = (await this.options.executions.get(executionId)).state;
    return jobId === "" ? work() : this.queues.run(jobId, work);
  }

  /** A job evaluated in its queue, in answer to `c`. */
  private place(jobId: string, c: Issued & { readonly actor?: Actor }): Promise<void> {
    return this.queues.run(jobId, () => this.placeNow(jobId, c));
  }

  private context(
    c: WorkflowCommand &
      Partial<Pick<Issued, "commandId" | "causationId" | "correlationId">> & { readonly actor?: Actor },
  ): CommandContext {
    return commandContext(c.actor ?? JOBS_ACTOR, {
      reason: c.reason,
      ...(c.causationId ? { causationId: c.causationId } : {}),
      ...(c.correlationId ? { correlationId: c.correlationId } : {}),
    });
  }

  /**
   * A job's executions: which ones from the read model (caughtUp first), each as its actor has it now (a node's answer
   * may be stored and not folded yet).
   */
  private async executionsOf(jobId: string, versions: "current" | "all" = "current"): Promise<ExecutionState[]> {
    // A later version of the job runs alone: its earlier versions' executions neither hold its partitions nor count
    // for its outcome (they are stopped as it is placed).
    const version = versions === "all" ? undefined : (await this.options.jobs.get(jobId)).state.version;
    const ids = this.options.jobViews
      .executionsOfJob(jobId)
      .filter((e) => version === undefined || e.jobVersion === version)
      .map((e) => e.executionId);
    return Promise.all(ids.map(async (id) => (await this.options.executions.get(id)).state));
  }

  /**
   * The capacity held now: every execution the read model has that is not terminal, kept up to date as it folds
   * (readModelFolded), and every execution planned and not folded yet (reserved by evaluate). It counts every
   * execution this orchestrator created or is creating, whatever the read model folded: read it after the last await
   * of a placement, never before one. Nothing is rebuilt per placement.
   */
  private ledger(): CapacityLedger {
    return this.held.current();
  }

  /** The job read model folded these events: the executions they changed take, move or give back their capacity. */
  readModelFolded(batch: Iterable<EventEnvelope>): void {
    for (const { recorded } of batch) {
      if (categoryOf(recorded.stream) !== EXECUTION_CATEGORY) continue;
      const e = this.options.jobViews.execution(entityIdOf(recorded.stream));
      if (e === undefined) continue;
      this.held.update(e);
    }
  }

  /**
   * Places again every job that may take more now (a node that can take more work, the
   * QueueBackoff): the Queued ones, the batch and service jobs with a partition no execution holds
   * (placed in part, or a retry that found no node yet), and every ops and daemon job (a node that
   * matches and has no execution of it gets one).
   */
  private async placeQueued(c: Issued, gainedNodes?: ReadonlySet<string>): Promise<void> {
    const { jobViews } = this.options;
    // Every job's writes: the pass picks the jobs to evaluate from the read model's view of all of them. One wait per
    // pass (requests join a waiting pass), so it is no convoy.
    await this.writes.caughtUpAll(c.causationPosition);
    const waiting: string[] = [];
    const gained =
      gainedNodes === undefined
        ? undefined
        : [...gainedNodes].flatMap((id) => {
            const view = this.options.nodeViews.get(id);
            return view === undefined || view.deleted ? [] : [{ id, labels: candidateNodeOf(view).labels }];
          });
    for (const j of jobViews.allJobs()) {
      if (j.spec === undefined || j.state === undefined || isTerminalJobState(j.state)) continue;
      const executions = jobViews.executionsOfJob(j.jobId).filter((e) => e.jobVersion === j.version);
      if (gained !== undefined && !gained.some((n) => mayTake(j.spec as JobSpec, executions, n))) continue;
      if (j.state === "Queued" || wantsPlacement(j.spec.Type, j.spec.Count, executions.map(this.existing)))
        waiting.push(j.jobId);
    }
    // In the pass's order, each job's capacity reserved before the next job is decided (a job's earlier work in its
    // queue first); their appends go on concurrently, and the pass ends when all of them did.
    const done: Promise<void>[] = [];
    for (const jobId of waiting) {
      let planned = (): void => {};
      const decided = new Promise<void>((resolve) => (planned = resolve));
      const work = this.queues.run(jobId, () => this.placeNow(jobId, c, planned));
      done.push(work);
      await Promise.race([decided, work.then(noop, noop)]);
    }
    const failed = (await Promise.allSettled(done)).find((r) => r.status === "rejected");
    if (failed !== undefined) throw failed.reason;
  }

  /**
   * An execution as placement counts it: a service's on a draining node is leaving (it holds no
   * partition, so its replacement is placed while it still runs; docs/nodes.md, Drain).
   */
  private readonly existing = (e: ExecutionState): ExistingExecution => {
    const base = toExisting(e);
    if (
      e.jobType !== "service" ||
      isTerminal(base) ||
      this.options.nodeViews.get(e.nodeId)?.drain?.status !== "draining"
    )
      return base;
    return { ...base, leaving: true };
  };

  /**
   * Another workflow (the node drain) asks for a job's placement: the drain's replacements of a
   * service's executions. In the job's queue, like every placement of it; its actor and reason are the caller's, and
   * so is the seed of the command's id (`idSeed`).
   */
  placeFor(jobId: string, by: PlacementBy): Promise<void> {
    const c = {
      handler: PLACEMENT,
      entityId: jobId,
      type: "PlaceJob",
      reason: by.reason,
      actor: by.actor,
      commandId: placementCommandId(jobId, by),
      causationId: by.causationId,
      correlationId: by.correlationId,
    };
    return this.place(jobId, c);
  }

  /** What the pure scheduler is asked for one job, given its executions as placement counts them. */
  private requestFor(job: JobState, spec: JobSpec, executions: readonly ExistingExecution[]): PlacementRequest {
    return placementRequestOf(job, spec, executions, this.options.fleet(), this.options.clock.now());
  }

  /**
   * Whether another node would take this execution's partition now: a dry run of the placement
   * with the execution leaving, nothing reserved or created. The node drain stops a batch
   * execution only then; else the execution runs on (to its end, or the drain's deadline) rather
   * than the job failing for want of a node. In the job's queue: a placement of the job under way is stored and
   * listed (its reservation alone, without its execution, would make the dry run count the partition missing). The
   * ledger is read after the last await, so it counts every other job's placements planned so far.
   */
  placeableElsewhere(execution: ExecutionState): Promise<boolean> {
    return this.queues.run(execution.jobId, async () => {
      const job = (await this.options.jobs.get(execution.jobId)).state;
      const spec = job.spec;
      if (spec === undefined || job.state === undefined || isTerminalJobState(job.state)) return false;
      // An earlier version's work is the current version's to replace (its update stops it anyway): nothing waits for
      // it, and the dry run below, of the current version's partitions, would not know it.
      if (execution.jobVersion < job.version) return true;
      await this.writes.caughtUp(execution.jobId);
      const executions = (await this.executionsOf(execution.jobId)).map((e) =>
        e.executionId === execution.executionId ? { ...this.existing(e), leaving: true } : this.existing(e),
      );
      const result = placeJob(this.requestFor(job, spec, executions), this.ledger());
      return result.placements.some((p) => p.partitionIndex === execution.partitionIndex);
    });
  }

  /**
   * One job placed again outside any workflow step (its partial placement's QueueTimeout passed): its context says why.
   */
  private retryJob(jobId: string, reason: string): Promise<void> {
    const c = {
      handler: PLACEMENT,
      entityId: jobId,
      type: "PlaceJob",
      reason,
      commandId: deterministicId("job-retry", jobId, reason, String(this.options.clock.now())),
      causationId: "",
      correlationId: "",
    };
    return this.place(jobId, c);
  }

  /**
   * Bacalhau's evaluation of one job, as its schedulers for v1.7 do it: place what is missing
   * (a first placement, a failed partition's retry, a top-up of a job placed in part, a new
   * node for an ops or daemon job), then judge the job by its executions. Every placement's
   * execution id comes from the job, the partition (ops, daemon: the node) and how many
   * executions that partition already had, so a retry gets a new id and a replayed step the same.
   */
  private async placeNow(jobId: string, c: Issued & { readonly actor?: Actor }, planned?: () => void): Promise<void> {
    try {
      await this.writes.caughtUp(jobId, c.causationPosition);
      await this.evaluateOrEnd(jobId, c, planned);
    } finally {
      planned?.();
    }
  }

  /**
   * evaluate(), but a failure for this job's own data (not the store's or NATS's, which pass)
   * fails the job with the reason, and the placements after it go on.
   */
  private async evaluateOrEnd(jobId: string, c: Issued, planned?: () => void): Promise<void> {
    try {
      await this.evaluate(jobId, c, planned);
    } catch (err) {
      if (isTransientFailure(err)) throw err;
      const why = err instanceof Error ? err.message : String(err);
      const reason = `the orchestrator cannot place this job: ${why}`.slice(0, 4096);
      this.options.logger.error({ err, jobId }, "placing a job failed for its own data: the job fails");
      await endFailedJobStep(this.options)({ ...c, handler: PLACEMENT, type: "PlaceJob", entityId: jobId }, reason);
    }
  }

  /**
   * The job and its executions are read, evaluateJob decides, applyJobPlan issues what it decided. `planned` is called
   * once the capacity it takes is reserved, before its appends.
   */
  private async evaluate(jobId: string, c: Issued & { readonly actor?: Actor }, planned?: () => void): Promise<void> {
    const job = (await this.options.jobs.get(jobId)).state;
    const spec = job.spec;
    // A job that ended, or that today's limits refuse, is decided without its executions: none is loaded.
    const open = spec !== undefined && job.state !== undefined && !isTerminalJobState(job.state);
    const refusal = open ? this.options.refusal?.(jobId, spec) : undefined;
    const every = open && refusal === undefined ? await this.executionsOf(jobId, "all") : [];
    // A job's later version replaces the earlier versions' executions at the rate limit's pace, and only the current
    // version's count for its outcome (Bacalhau >= 1.8's schedulers; evaluateJob).
    const executions = every.filter((e) => e.jobVersion === job.version);
    const earlier = every.filter((e) => e.jobVersion < job.version);
    // The decision and its reservations are one synchronous section (run in a slice of the event loop, LoopSlices): no
    // other placement runs in between, so none can count the capacity this one takes as free. The ledger is read in
    // it, after the last await, never before one (a ledger read before would miss what other jobs reserved meanwhile,
    // and book their capacity again). It does not need the read model
    // to have folded other jobs' Creates (this job's caughtUp waits for this job's writes only): every execution is
    // created by a plan of this runner, reserved here before its Create is appended, and the fold only replaces that
    // reservation. What other jobs' executions gave back and the read model has not folded yet still counts as held:
    // a placement may queue a job too early, never book a node twice.
    const plan = await this.slices.run(() => {
      const decided = evaluateJob({
        job,
        executions,
        earlier,
        ...(this.options.rateLimit === undefined ? {} : { rateLimit: this.options.rateLimit }),
        leaving: new Set(executions.filter((e) => this.existing(e).leaving === true).map((e) => e.executionId)),
        requestFor: (existing) => this.requestFor(job, spec as JobSpec, existing),
        // Without what this job's own Creates of unknown outcome reserved: planned again, they must not block
        // themselves.
        ledger: this.held.currentFor(jobId),
        now: this.options.clock.now(),
        ...(this.options.answerTimeoutMs === undefined ? {} : { answerTimeoutMs: this.options.answerTimeoutMs }),
        ...(refusal === undefined ? {} : { refusal }),
      });
      this.reserve(jobId, decided.create);
      return decided;
    });
    planned?.();
    // A version's first placement is timed from its own submission (an update's, a rerun's).
    const firstPlacement = executions.length === 0 ? job.versionTime : undefined;
    await applyJobPlan(this.options, plan, this.step(jobId, c, spec?.Type, firstPlacement));
  }

  /**
   * What a plan creates holds its capacity from now on. An execution the read model has already folded (a replayed
   * step's Create, stored the first time) holds what the read model says instead.
   */
  private reserve(jobId: string, create: PlacementPlan["create"]): void {
    for (const { executionId, command } of create) {
      if (this.options.jobViews.execution(executionId) !== undefined) continue;
      const allocation = { nodeId: command.nodeId, resources: fromBacalhauResources(command.resources) };
      this.held.reserve(executionId, allocation, jobId);
    }
  }

  /**
   * How a plan for the job (of `type`: a job with no spec has none, and nothing is placed for it) is carried out in
   * answer to `c`: its contexts, its bookkeeping, its follow-ups.
   */
  private step(
    jobId: string,
    c: Issued & { readonly actor?: Actor },
    type?: JobType,
    submittedAt?: number,
  ): JobPlanStep {
    const { placed, clock } = this.options;
    return {
      jobId,
      context: this.context(c),
      because: (reason) => this.context({ ...c, reason }),
      wrote: (position) => this.writes.wrote(jobId, position),
      abandoned: (ids) => {
        for (const id of ids) this.held.forget(id);
      },
      evaluateAgain: (reason) => this.retryJob(jobId, reason),
      ...(placed === undefined || type === undefined
        ? {}
        : { placed: () => placed(type, submittedAt === undefined ? undefined : clock.now() - submittedAt) }),
    };
  }

  /**
   * Moves a node's work off it: every execution under way on it (of `jobTypes`, else of every
   * type) is failed by the orchestrator with `message`, as lost with the node, and the node is
   * told to stop it (should it hear). What follows is any failure's (SettleJob): a batch or service
   * partition gets a replacement on another node, an ops job fails, a daemon's node gets a new
   * execution once it is back (releasesNode). After every job's work queued before it (KeyedQueues.settled): a
   * placement on the node planned from the view before its loss has stored its Create by then and is listed, so it is
   * failed too rather than left on a node nobody watches. Placements planned later see the node as it is now. Other
   * jobs' work is not held up meanwhile: what this frees only makes the ledger more cautious until it is folded.
   * Idempotent: an execution that ended is left alone.
   * Callable by any workflow (node reactions, drain): `context` says which and why.
   */
  loseNodeWork(
    nodeId: string,
    message: string,
    context: CommandContext,
    jobTypes?: ReadonlySet<JobType>,
  ): Promise<number> {
    return this.nodeWork.run(nodeId, async () => {
      await this.queues.settled();
      const { executions, work } = this.options;
      await this.writes.caughtUpAll();
      let lost = 0;
      for (const e of this.options.jobViews.byNode.underWayOn(nodeId)) {
        if (jobTypes !== undefined && e.jobType !== undefined && !jobTypes.has(e.jobType)) continue;
        const current = (await executions.get(e.executionId)).state;
        if (current.nodeId !== nodeId || current.computeState === undefined || isTerminal(toExisting(current)))
          continue;
        // Once folded, the read model counts it as lost with the node (JobViews.byNode), to be stopped when it is back.
        const failed = { type: "Fail", reason: message, cause: "Orchestrator" } as const;
        this.writes.wrote(e.jobId, (await executions.execute(e.executionId, failed, context)).position);
        // Heard only if the node is reachable; else it is told again when it is back (stopLostWork).
        work.cancelExecution(nodeId, e.executionId, message.slice(0, 1024));
        lost++;
      }
      if (lost > 0)
        this.options.logger.info({ nodeId, lost, reason: context.reason }, "a node's executions were lost with it");
      return lost;
    });
  }

  /**
   * A node is back (HEALTHY again, approved again) with the event at `at`: the executions lost with
   * it since its previous return may still run there (nothing told it while it was away), so it is
   * told to stop each, a few times (LostWorkStops). Told once per return: the next one asks only for
   * what was lost after this one (the read model's JobViews.byNode.lostBefore).
   */
  stopLostWork(nodeId: string, at?: number): number {
    const ids = this.options.jobViews.byNode.lostBefore(nodeId, at);
    this.lostStops.tell(nodeId, ids);
    return ids.length;
  }

  /**
   * A node's labels changed: each daemon execution under way on it whose job's constraints the
   * node no longer matches is cancelled, and the node told to stop it. The
   * labels are placement's (candidateNodeOf), so matching here and there never disagree. After every job's work
   * queued before it, as loseNodeWork: a daemon placed on the node from its old labels is listed and stopped too.
   */
  checkDaemonMatch(nodeId: string, context: CommandContext): Promise<number> {
    return this.nodeWork.run(nodeId, () => this.stopUnmatchedDaemons(nodeId, context));
  }

  private async stopUnmatchedDaemons(nodeId: string, context: CommandContext): Promise<number> {
    await this.queues.settled();
    const view = this.options.nodeViews.get(nodeId);
    if (view === undefined || view.deleted) return 0;
    const labels = candidateNodeOf(view).labels;
    await this.writes.caughtUpAll();
    let stopped = 0;
    for (const e of this.options.jobViews.byNode.underWayOn(nodeId)) {
      if (e.jobType !== "daemon") continue;
      const spec = (await this.options.jobs.get(e.jobId)).state.spec;
      const unmet = spec === undefined ? [] : unmetConstraints(spec, labels);
      if (unmet.length === 0) continue;
      const current = (await this.options.executions.get(e.executionId)).state;
      if (current.computeState === undefined || isTerminal(toExisting(current))) continue;
      const message = nodeUnmatchedMessage(
        nodeId,
        unmet
          .map(
            (c) =>
              `${formatConstraint(c)}: ${c.key} is ${labels[c.key] === undefined ? "not set" : `now ${labels[c.key]}`}`,
          )
          .join("; "),
      );
      const cancelled = await this.options.executions.execute(
        e.executionId,
        { type: "Cancel", reason: message },
        context,
      );
      this.writes.wrote(e.jobId, cancelled.position);
      this.options.work.cancelExecution(nodeId, e.executionId, message.slice(0, 1024));
      stopped++;
    }
    return stopped;
  }

  /** No more resends (the orchestrator stops). */
  stop(): void {
    this.dispatcher.stop();
    this.lostStops.stop();
  }

  /**
   * A node accepted a bid: Bacalhau's approval per partition over the job's executions (batch and
   * service; an ops or daemon bid is direct and needs none).
   */
  private async approve(executionId: string, c: Issued): Promise<void> {
    const accepted = (await this.options.executions.get(executionId)).state;
    if (accepted.jobType !== "batch" && accepted.jobType !== "service") return;
    const job = (await this.options.jobs.get(accepted.jobId)).state;
    if (job.state === undefined || isTerminalJobState(job.state)) return;
    const context = this.context(c);
    await this.writes.caughtUp(accepted.jobId, c.causationPosition);
    // An execution leaving a draining node is not its partition's runner: its replacement's bid is approved while it
    // still runs.
    await this.approver.approve(
      (await this.executionsOf(accepted.jobId)).filter((e) => this.existing(e).leaving !== true),
      context,
    );
    // Checked on the executions, not on what this call approved: a replay after a crash between the two finds the
    // approval done.
    if (
      job.state !== "Running" &&
      (await this.executionsOf(accepted.jobId)).some((e) => e.desiredState === "Running" && !isTerminal(toExisting(e)))
    ) {
      await this.options.jobs.execute(accepted.jobId, { type: "Run" }, context);
    }
  }

  /**
   * An execution ended: its job is evaluated again (place): a batch job may be complete, a failed
   * batch or service partition is retried (another node first), an ops job may be done.
   */
  private async settle(executionId: string, c: Issued): Promise<void> {
    const ended = (await this.options.executions.get(executionId)).state;
    if (ended.jobId === "") return;
    // Its node may hold it after all (an executor that was stuck): told to drop it, should it hear.
    if (endedUnanswered(ended)) {
      this.options.work.cancelExecution(ended.nodeId, executionId, ended.computeMessage.slice(0, 1024));
    }
    await this.placeNow(ended.jobId, c);
  }

  /**
   * A job that ended: its executions still under way are cancelled, and their nodes told to stop
   * them, with Bacalhau's reasons (the job's own message, the operator's stop reason or what
   * failed, is in the job's history).
   */
  private async cancel(jobId: string, c: Issued): Promise<void> {
    const job = (await this.options.jobs.get(jobId)).state;
    await this.writes.caughtUp(jobId, c.causationPosition);
    await applyJobPlan(
      this.options,
      jobEndPlan(job, await this.executionsOf(jobId, "all")),
      this.step(jobId, c, job.spec?.Type),
    );
  }
}

const noop = (): void => {};

const toRequirement = (r: JobSpec["Constraints"][number]): ConstraintRequirement => ({
  key: r.Key,
  operator: r.Operator,
  values: r.Values,
});

/**
 * Whether labels match a job's required constraints (its favoured ones only rank). A spec that cannot be parsed
 * matches: placement says why.
 */
function matchesConstraints(spec: JobSpec, labels: Readonly<Record<string, string>>): boolean {
  try {
    return matchesLabels(jobSelectors(spec.Constraints.map(toRequirement)).required, labels);
  } catch {
    return true;
  }
}

/**
 * The job's required constraints the labels do not meet (none for a spec that cannot be parsed: placement says why).
 */
function unmetConstraints(spec: JobSpec, labels: Readonly<Record<string, string>>): ConstraintRequirement[] {
  const required = spec.Constraints.map(toRequirement).filter((c) => !c.key.startsWith(FAVOUR_PREFIX));
  try {
    const { requirements } = jobSelectors(required).required;
    return required.filter((_c, i) => !matchesRequirement(requirements[i] as (typeof requirements)[number], labels));
  } catch {
    return [];
  }
}

/**
 * Whether a node that just gained (joined, approved, recovered, changed) could take more of this
 * job: it matches the job's constraints and, for ops and daemon, holds no execution of it that
 * keeps it (one lost with it, or stopped for not matching, does not).
 */
function mayTake(
  spec: JobSpec,
  executions: readonly ExecutionState[],
  node: { readonly id: string; readonly labels: Readonly<Record<string, string>> },
): boolean {
  if (!matchesConstraints(spec, node.labels)) return false;
  if (spec.Type !== "ops" && spec.Type !== "daemon") return true;
  return !executions.some(
    (e) =>
      e.nodeId === node.id && !(spec.Type === "daemon" && isTerminal(toExisting(e)) && releasesNode(e.computeMessage)),
  );
}
