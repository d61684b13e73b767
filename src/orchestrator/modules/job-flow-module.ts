import { onDuty } from "../../cluster/on-duty.ts";
import { EXECUTION_CATEGORY, JOB_CATEGORY, categoryOf, entityIdOf } from "../../events/streams.ts";
import type { JobViews } from "../../projections/jobs/job-views.ts";
import { endFailedJobStep } from "../../workflows/jobs/failed-job-step.ts";
import { isNodeGain, jobFlow } from "../../workflows/jobs/job-flow.ts";
import { WorkflowHost } from "../../workflows/workflow-host.ts";
import type { WorkflowInput } from "../../workflows/workflow-input.ts";
import type { Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";
import type { JobModule } from "./job-module.ts";
import type { NodeModule } from "./node-module.ts";

/**
 * How many jobs' steps of one batch the job flow runs at once. Each step waits on its own durable commits (the step
 * record, then its job's or execution's events); with this many in flight, a group commit takes dozens of appends
 * instead of one or two, while a batch of the lane (up to 512 events) still spreads over a bounded number of
 * concurrent placements and NATS requests.
 */
export const JOB_FLOW_CONCURRENCY = 64;

/**
 * A job flow input's order key: its job's id, so that a job's own steps (placement, its executions' approval,
 * settle, cancel) keep store order relative to each other, and different jobs run side by side. An execution's job is
 * in its ExecutionCreated, else in the job read model; failing both, the execution's own stream keeps its order.
 */
export const jobOrderKey =
  (views: Pick<JobViews, "execution">) =>
  (input: WorkflowInput): string => {
    const category = categoryOf(input.stream);
    if (category === JOB_CATEGORY) return input.entityId;
    if (category !== EXECUTION_CATEGORY) return input.stream;
    if (input.event.type === "ExecutionCreated") return input.event.data.JobID;
    return views.execution(input.entityId)?.jobId ?? input.stream;
  };

/**
 * The job flow (docs/jobs.md, Workflows): jobs placed, dispatched to their nodes, settled, cancelled, as a recorded
 * workflow; queued jobs tried again when a node may take more, every QueueBackoff, and at start. Listed after node
 * reactions and drain: at start, work lost with nodes gone meanwhile is found and drains resume before dispatch
 * resumes and the queue is tried again.
 */
export function jobFlowModule(
  context: OrchestratorContext,
  offers: { readonly nodes: NodeModule; readonly jobs: JobModule },
): Module {
  const { config, store, logger, processors, deadlines, stops } = context;
  const { nodes, jobs } = offers;
  // Among several orchestrators one runs the job workflows (placement serialized, like Nomad's plan applier).
  const duty = context.cluster.duty("jobs");
  return {
    name: "job flow",

    follow() {
      const jobRunner = jobs.runner.get();
      processors.add(
        onDuty(
          new WorkflowHost(jobFlow, {
            store,
            checkpoints: store,
            handlers: jobRunner.handlers(),
            logger: logger.child({ component: "workflows" }),
            // A step that fails for its job's or execution's data ends that entity; the jobs after it go on.
            endEntity: endFailedJobStep({ jobs: jobs.control.jobs, executions: jobs.control.executions }),
            concurrency: JOB_FLOW_CONCURRENCY,
            orderKey: jobOrderKey(jobs.views),
          }),
          duty,
        ),
      );
      // A node that joins, is approved or recovers: the jobs it could take are placed again (from now on; not
      // recorded as workflow steps).
      const nodesFrom = nodes.headAtStart.get();
      processors.add({
        name: "job-placement-on-node-gain",
        checkpoints: { load: () => Promise.resolve(nodesFrom), save: () => Promise.resolve() },
        handle: (batch) => {
          if (!duty.held) return;
          const gained = new Set<string>();
          for (const e of batch)
            if (isNodeGain(e.recorded.stream, e.recorded.type)) gained.add(entityIdOf(e.recorded.stream));
          if (gained.size === 0) return;
          jobRunner
            .retryQueued("a node may take more work", gained)
            .catch((err: unknown) => logger.error({ err }, "placing the queued jobs failed"));
        },
      });
    },

    async arm() {
      const jobRunner = jobs.runner.get();
      // At start, or when this orchestrator takes the job workflows over from another.
      const stop = await duty.whileHeld("resuming dispatch and the queue", () => {
        // Work sent before a crash may never have reached its node, nor a cancel (docs/jobs.md, After a crash).
        jobRunner.resumeDispatch(jobs.views.allExecutions());
        const cancels = jobs.work.resume(jobs.views.allExecutions());
        if (cancels > 0) logger.info({ cancels }, "cancels cut short by the stop are sent again");
        // Placements a stop cut short (a rate-limited evaluation's rest, a top-up's timer) are made now, not at the
        // next QueueBackoff.
        jobRunner
          .retryQueued("the orchestrator started")
          .catch((err: unknown) => logger.error({ err }, "placing the waiting jobs at start failed"));
        const backoffMs = config["Orchestrator.Scheduler.QueueBackoff"];
        if (backoffMs <= 0) return;
        return deadlines.every("queue-backoff", backoffMs, () =>
          jobRunner.retryQueued().catch((err: unknown) => logger.error({ err }, "placing the queued jobs failed")),
        );
      });
      stops.add({ name: "stopping the queue backoff", run: stop });
    },
  };
}
