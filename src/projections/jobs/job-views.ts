import { evolveExecution } from "../../../machines/execution/evolve-execution.ts";
import { initialExecutionState, type ExecutionState } from "../../../machines/execution/execution-state.ts";
import { evolveJob } from "../../../machines/job/evolve-job.ts";
import { initialJobState, type JobState } from "../../../machines/job/job-state.ts";
import { executionEvents } from "../../events/catalog/execution-event-codec.ts";
import { jobEvents } from "../../events/catalog/job-event-codec.ts";
import type { RecordedEvent } from "../../events/store/event-store.ts";
import { EXECUTION_CATEGORY, JOB_CATEGORY, NODE_CATEGORY, categoryOf, entityIdOf } from "../../events/streams.ts";
import { EventEnvelope } from "../event-envelope.ts";
import { ExecutionsByNode, NODE_RETURNS } from "./executions-by-node.ts";
import { JobCounts } from "./job-counts.ts";
import { JobIndex } from "./job-index.ts";
import type { JobViewsAnchor, JobViewsSnapshot } from "../../snapshots/job-views-snapshot.ts";

/**
 * Every job and execution as its stream describes it, folded in store order with the deciders'
 * own evolve (the actor's fold: the two can never drift), the jobs indexed for the list, and the
 * executions by node (with the nodes' returns, which decide what a node is told to stop).
 * Fed by the processor host's one subscription.
 */
export class JobViews {
  private readonly jobs = new Map<string, JobState>();
  private readonly executions = new Map<string, ExecutionState>();
  /** Execution ids per job, in creation order. */
  private readonly executionsOf = new Map<string, string[]>();
  readonly index = new JobIndex();
  readonly byNode = new ExecutionsByNode();
  readonly counts = new JobCounts();
  /** The last event handled, of any category: where a snapshot of these views stands. */
  private last: JobViewsAnchor | undefined;

  handle = (recorded: RecordedEvent): void => this.handleEnvelope(new EventEnvelope(recorded));

  /** Decoded once by the envelope, which the workflows that follow the same subscription share. */
  handleEnvelope = (envelope: EventEnvelope): void => {
    this.fold(envelope);
    const { recorded } = envelope;
    // Only once folded: an event that failed to decode is delivered again, and a snapshot never stands past it.
    this.last = { position: recorded.position, stream: recorded.stream, revision: recorded.revision, id: recorded.id };
  };

  private fold(envelope: EventEnvelope): void {
    const { recorded } = envelope;
    const category = categoryOf(recorded.stream);
    if (category === JOB_CATEGORY) {
      const jobId = entityIdOf(recorded.stream);
      const before = this.jobs.get(jobId);
      const after = evolveJob(before ?? initialJobState(jobId), envelope.of(jobEvents)!, recorded.time);
      if (after === before || after.state === undefined) return;
      this.jobs.set(jobId, after);
      this.index.update(before, after);
      this.counts.jobChanged(before, after);
    } else if (category === EXECUTION_CATEGORY) {
      const executionId = entityIdOf(recorded.stream);
      const before = this.executions.get(executionId);
      const after = evolveExecution(
        before ?? initialExecutionState(executionId),
        envelope.of(executionEvents)!,
        recorded.time,
      );
      if (after === before || after.computeState === undefined) return;
      this.executions.set(executionId, after);
      this.byNode.executionChanged(before, after, recorded.position);
      this.counts.executionChanged(before, after);
      if (!before) {
        const list = this.executionsOf.get(after.jobId);
        if (list) list.push(executionId);
        else this.executionsOf.set(after.jobId, [executionId]);
      }
    } else if (category === NODE_CATEGORY && NODE_RETURNS.has(recorded.type)) {
      this.byNode.nodeReturned(entityIdOf(recorded.stream), recorded.position);
    }
  }

  /** Starts from a snapshot's states (before any event is handled). */
  seed(snapshot: JobViewsSnapshot): void {
    for (const job of snapshot.jobs) {
      this.jobs.set(job.jobId, job);
      this.index.update(undefined, job);
      this.counts.jobChanged(undefined, job);
    }
    // In the snapshot's order: each job's executions in creation order.
    for (const execution of snapshot.executions) {
      this.executions.set(execution.executionId, execution);
      this.counts.executionChanged(undefined, execution);
      const list = this.executionsOf.get(execution.jobId);
      if (list) list.push(execution.executionId);
      else this.executionsOf.set(execution.jobId, [execution.executionId]);
    }
    this.byNode.seed(snapshot.executions, snapshot.byNode);
    this.last = snapshot.anchor;
  }

  /** Every view now and the event they stand at; undefined before any event was handled. */
  snapshot(): JobViewsSnapshot | undefined {
    if (this.last === undefined) return undefined;
    const executions = [...this.executionsOf.values()].flat().map((id) => this.executions.get(id) as ExecutionState);
    return { anchor: this.last, jobs: [...this.jobs.values()], executions, byNode: this.byNode.snapshot() };
  }

  job(jobId: string): JobState | undefined {
    return this.jobs.get(jobId);
  }

  execution(executionId: string): ExecutionState | undefined {
    return this.executions.get(executionId);
  }

  /** The job's executions, oldest first. */
  executionsOfJob(jobId: string): ExecutionState[] {
    return (this.executionsOf.get(jobId) ?? []).map((id) => this.executions.get(id) as ExecutionState);
  }

  allJobs(): IterableIterator<JobState> {
    return this.jobs.values();
  }

  allExecutions(): IterableIterator<ExecutionState> {
    return this.executions.values();
  }
}
