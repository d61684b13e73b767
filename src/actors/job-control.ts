import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { JobDefaults, JobTypeDefaults } from "../../machines/job/job-defaults.ts";
import { DEFAULT_JOB_LIMITS, type JobLimits } from "../../machines/job/job-limits.ts";
import { canonicalJson } from "../../machines/canonical-json.ts";
import { DEFAULT_NAMESPACE, type JobSpec } from "../../machines/job/job-spec.ts";
import { newJobWithoutReplicas } from "../events/catalog/submitted-job.ts";
import { idempotentJobId } from "./job-submission/idempotent-job-id.ts";
import { nameJobId } from "./job-submission/name-job-id.ts";
import { problemText, validateJobSubmission } from "./job-submission/validate-job-submission.ts";
import { isJobId, jobIdOf } from "../../machines/job/job-id.ts";
import type { JobState } from "../../machines/job/job-state.ts";
import { jobAtVersion } from "../../machines/job/job-versions.ts";
import type { JobCommand, JobRefusal, JobSubmission } from "../../machines/job/job-commands.ts";
import type { ExecutionCommand, ExecutionRefusal } from "../../machines/execution/execution-commands.ts";
import type { JobEvent } from "../events/catalog/job-events.ts";
import type { ExecutionEvent } from "../events/catalog/execution-events.ts";
import type { ExecutionState } from "../../machines/execution/execution-state.ts";
import { ShoalError, badRequest, conflict, notFound } from "../errors/shoal-error.ts";
import { timeOrderedUuid } from "../events/store/time-ordered-uuid.ts";
import type { EventStore } from "../events/store/event-store.ts";
import type { Clock } from "./clock.ts";
import type { CommandContext } from "./command-context.ts";
import type { DeadlineScheduler } from "./deadline-scheduler.ts";
import { EntityRegistry } from "./entity-registry.ts";
import { executionKind } from "./execution-kind.ts";
import { jobKind } from "./job-kind.ts";
import type { Listening } from "./listening.ts";

export interface JobControlOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The orchestrator's one deadline heap: a job's QueueTimeout and TotalTimeout, an execution's ExecutionTimeout. */
  readonly deadlines: DeadlineScheduler;
  /** `JobDefaults.<Type>` from config: what a job gets where its spec sets nothing. */
  readonly defaults: JobDefaults;
  /** `JobLimits.*` from config: how large a job may be (Shoal's defaults when absent). */
  readonly limits?: JobLimits;
  /** Fresh UUIDs for job ids (tests may fix them). */
  readonly newUuid?: () => string;
  readonly idleMs?: number;
  readonly maxResident?: number;
  /** Since when the orchestrator hears its nodes: an execution's answer bound counts only that time. */
  readonly listening?: Listening;
  /** Whether jobs' and executions' deadlines fire here now (among several orchestrators: the jobs duty's holder). */
  readonly firesDeadlines?: () => boolean;
  /**
   * The ids of the jobs named so in a namespace, as the read model knows them: jobs stored before names gave ids
   * (`nameJobId`) are updated under their own id. None given: only names' ids.
   */
  readonly jobsNamed?: (namespace: string, name: string) => readonly string[];
}

/** The warnings a submission or an update stored. */
function warningsOf(events: readonly JobEvent[]): readonly string[] {
  const stored = events.find((e) => e.type === "JobSubmitted" || e.type === "JobUpdated");
  return stored?.type === "JobSubmitted" || stored?.type === "JobUpdated" ? stored.data.Warnings : [];
}

const NOTHING: JobTypeDefaults = { Priority: 0, Task: { Resources: {}, Timeouts: {} } };
const NO_DEFAULTS: JobDefaults = { Batch: NOTHING, Ops: NOTHING, Service: NOTHING, Daemon: NOTHING };

/** A stored job's refusal names this many of its problems (a job can have hundreds). */
const MAX_PROBLEMS_SHOWN = 5;

export interface Submitted {
  readonly jobId: string;
  readonly warnings: readonly string[];
  /** Store position of the JobSubmitted event: what a read-your-writes wait waits for. */
  readonly position: number | undefined;
}

export interface Rerun {
  readonly jobVersion: number;
  readonly position: number | undefined;
}

export interface Stopped {
  /** Undefined when nothing was stored (the job was already Stopped). */
  readonly position: number | undefined;
}

/**
 * What the API asks of jobs: submit and stop. Jobs and executions are entities on the generic
 * core (their actors, their registries, their deadlines armed in the one heap); this façade picks
 * their ids (`j-<uuid>`) and hands commands to their actors, which take `now` from the host's clock.
 */
export class JobControl {
  readonly jobs: EntityRegistry<JobState, JobCommand, JobEvent, JobRefusal>;
  readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;
  private readonly newUuid: () => string;
  private readonly checked = new WeakMap<JobSpec, string>();

  constructor(private readonly options: JobControlOptions) {
    const env = {
      store: options.store,
      clock: options.clock,
      deadlines: options.deadlines,
      newEventId: timeOrderedUuid,
    };
    const registry = {
      idleMs: options.idleMs ?? 300_000,
      maxResident: options.maxResident ?? 10_000,
      ...(options.listening ? { listening: options.listening } : {}),
      ...(options.firesDeadlines ? { firesDeadlines: options.firesDeadlines } : {}),
    };
    this.jobs = new EntityRegistry(jobKind, env, { ...registry, logger: options.logger.child({ entity: "job" }) });
    this.executions = new EntityRegistry(executionKind, env, {
      ...registry,
      logger: options.logger.child({ entity: "execution" }),
    });
    this.newUuid = options.newUuid ?? randomUUID;
  }

  /**
   * Submits a job spec (Bacalhau's models.Job as decoded). An invalid one is refused with every
   * problem named (BadRequest) and nothing is stored. `request` is what the request says beside
   * the job (Bacalhau's BasePutRequest): its Namespace must be the job's; with an IdempotencyToken
   * a retry of the same submission answers the job the first one stored, and a different job under
   * the same token is a Conflict. A job with a Name is that name's job (Bacalhau ≥ 1.8): submitted
   * the first time, updated to its next version after (`updateNamed`).
   */
  async submit(
    job: unknown,
    context: CommandContext,
    request: {
      readonly namespace?: string | undefined;
      readonly idempotencyToken?: string | undefined;
      readonly force?: boolean | undefined;
    } = {},
  ): Promise<Submitted> {
    const token = request.idempotencyToken;
    const jobId = token ? idempotentJobId(context.actor.id, token) : jobIdOf(this.newUuid());
    let submission = validateJobSubmission(job, {
      jobId,
      defaults: this.options.defaults,
      limits: this.limits,
      ...(request.namespace ? { requestNamespace: request.namespace } : {}),
    });
    if (!submission.ok && (await this.namesAJob(job))) submission = asUpdate(submission);
    const known = submission.ok
      ? (this.options.jobsNamed?.(submission.spec.Namespace, submission.spec.Name) ?? [])
      : [];
    // A token's first submission stores the token's job, whatever its name; a name a job has is that job's.
    if (submission.ok && submission.spec.Name !== jobId && (known.length > 0 || !token)) {
      return this.updateNamed(submission.spec, known, submission, context, request.force === true, token);
    }
    const command = { type: "Submit", submission, ...(token ? { token } : {}) } as const;
    try {
      // A fresh random id has no stream: nothing to read before deciding. A token's may have one.
      const [result] = await this.jobs.executeWithState(jobId, command, context, undefined, !token);
      return { jobId, warnings: warningsOf(result.events), position: result.position };
    } catch (e) {
      if (!token || !(e instanceof ShoalError) || e.kind !== "Conflict" || !submission.ok) throw e;
      const first = (await this.jobs.get(jobId)).state;
      if (first.spec === undefined || canonicalJson(first.spec) !== canonicalJson(submission.spec))
        throw conflict(`IdempotencyToken ${JSON.stringify(token)} was used for another job (${jobId})`);
      return { jobId, warnings: first.warnings, position: undefined };
    }
  }

  /** Whether an invalid submission's Name is a job's: it was meant as that job's update. */
  private async namesAJob(job: unknown): Promise<boolean> {
    if (typeof job !== "object" || job === null) return false;
    const { Name: name, Namespace: ns } = job as { readonly Name?: unknown; readonly Namespace?: unknown };
    if (typeof name !== "string" || name === "") return false;
    const namespace = typeof ns === "string" && ns !== "" ? ns : DEFAULT_NAMESPACE;
    const ids = [...(this.options.jobsNamed?.(namespace, name) ?? []), nameJobId(namespace, name)];
    for (const id of ids) if ((await this.jobs.get(id)).state.spec !== undefined) return true;
    return false;
  }

  /**
   * A job spec as a submission would store it (validated, the defaults applied), stored nowhere: what Bacalhau's
   * DiffJob compares. `named`: the spec names its job (else its Name is a fresh id's).
   */
  prepare(
    job: unknown,
    namespace: string | undefined,
  ): { readonly submission: JobSubmission; readonly named: boolean } {
    const jobId = jobIdOf(this.newUuid());
    const submission = validateJobSubmission(job, {
      jobId,
      defaults: this.options.defaults,
      limits: this.limits,
      ...(namespace ? { requestNamespace: namespace } : {}),
    });
    return { submission, named: submission.ok && submission.spec.Name !== jobId };
  }

  /**
   * The named job submitted, or updated to the submitted spec (its next version). The job is the
   * one the read model knows by that name (`known`: one stored before names gave ids, or under an
   * IdempotencyToken), else the name's own id. A token is one submission: its retry with the same spec answers the
   * job, storing nothing, and another spec under it is a Conflict (the job's decider remembers each token's version).
   */
  private async updateNamed(
    spec: JobSpec,
    known: readonly string[],
    submission: JobSubmission,
    context: CommandContext,
    force: boolean,
    token: string | undefined,
  ): Promise<Submitted> {
    if (known.length > 1) {
      throw badRequest(`multiple jobs are named ${spec.Name} in namespace ${spec.Namespace}: update one by its ID`, {
        matches: known.slice(0, 3),
      });
    }
    const jobId = known[0] ?? nameJobId(spec.Namespace, spec.Name);
    const command = { type: "Put", submission, force, ...(token ? { token } : {}) } as const;
    const [result, state] = await this.jobs.executeWithState(jobId, command, context);
    // A retry stores nothing: the warnings are those of the version it made.
    if (result.events.length === 0) {
      const made = token === undefined ? undefined : state.tokens?.[token];
      const version = made === undefined ? state : jobAtVersion(state, made);
      return { jobId, warnings: version?.warnings ?? state.warnings, position: undefined };
    }
    return { jobId, warnings: warningsOf(result.events), position: result.position };
  }

  /**
   * Runs the job's spec of `version` (0: its current one) again as its next version, as Bacalhau's
   * rerun: NotFound for a job or version that does not exist, Conflict for a job Pending or Queued.
   */
  async rerun(jobId: string, version: number, reason: string, context: CommandContext): Promise<Rerun> {
    if (!isJobId(jobId)) throw notFound(`job not found: ${jobId}`);
    const [result, state] = await this.jobs.executeWithState(jobId, { type: "Rerun", version, reason }, context);
    return { jobVersion: state.version, position: result.position };
  }

  private get limits(): JobLimits {
    return this.options.limits ?? DEFAULT_JOB_LIMITS;
  }

  /**
   * Why a stored job would be refused by today's rules and limits (they may be tighter than when
   * it was submitted, or it predates them), or undefined when it would not. Such a job is failed
   * with this reason, never placed: one stored job must not stop the others, or a start.
   */
  storedJobRefusal(jobId: string, spec: JobSpec): string | undefined {
    // A stored spec never changes: each is checked once while it is in memory.
    const known = this.checked.get(spec);
    if (known !== undefined) return known === "" ? undefined : known;
    // No defaults: the spec is judged as it was stored, never by defaults configured since.
    const checked = validateJobSubmission(spec, { jobId, defaults: NO_DEFAULTS, limits: this.limits });
    const problems = checked.ok ? [] : checked.problems.map(problemText);
    const more = problems.length - MAX_PROBLEMS_SHOWN;
    const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).join("; ") + (more > 0 ? `; and ${more} more` : "");
    const refusal = problems.length === 0 ? "" : `the job breaks today's job limits and cannot run: ${shown}`;
    this.checked.set(spec, refusal);
    return refusal === "" ? undefined : refusal;
  }

  /**
   * Stops a job, as Bacalhau's DELETE does: a Stopped job stays as it is (nothing stored), a
   * Completed one is a Conflict, an unknown one NotFound.
   */
  async stop(jobId: string, reason: string, context: CommandContext): Promise<Stopped> {
    // Not a job id: no stream to look for (and nothing a stream name must not carry).
    if (!isJobId(jobId)) throw notFound(`job not found: ${jobId}`);
    const result = await this.jobs.execute(jobId, { type: "Stop", reason }, context);
    return { position: result.position };
  }

  /** Arms the deadlines of states that recovery (the read model's fold) rebuilt without loading their actors. */
  armRecovered(jobs: Iterable<JobState>, executions: Iterable<ExecutionState>): void {
    for (const job of jobs) this.jobs.arm(job.jobId, job);
    for (const execution of executions) this.executions.arm(execution.executionId, execution);
  }

  close(): void {
    this.jobs.stop();
    this.executions.stop();
  }
}

/** An invalid update's problems, said of an update: its Count 0 is no new job's. */
function asUpdate(submission: Extract<JobSubmission, { readonly ok: false }>): JobSubmission {
  const reworded = (message: string): string => {
    for (const type of ["batch", "service"])
      if (message === newJobWithoutReplicas(type))
        return `an update of a ${type} job must run at least 1 replica (to stop its executions, stop the job)`;
    return message;
  };
  return { ok: false, problems: submission.problems.map((p) => ({ ...p, message: reworded(p.message) })) };
}
