import { ExecutionReportHandler } from "../../actors/execution-report-handler.ts";
import { ExecutionReportsOnActors } from "../../actors/execution-reports-on-actors.ts";
import { JobControl } from "../../actors/job-control.ts";
import { JobLogs } from "../../api/jobs/job-logs.ts";
import { JobResults } from "../../api/jobs/job-results.ts";
import { EXECUTION_CATEGORY, JOB_CATEGORY, categoryOf, entityIdOf } from "../../events/streams.ts";
import { CatchUp } from "../../projections/catch-up.ts";
import type { EventEnvelope } from "../../projections/event-envelope.ts";
import { JobViews } from "../../projections/jobs/job-views.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import {
  jobViewsSnapshotPath,
  readJobViewsSnapshot,
  writeJobViewsSnapshot,
} from "../../snapshots/job-views-snapshot.ts";
import { NATS_DRAIN_TIMEOUT_MS } from "../../transport/close-nats-connection.ts";
import { NodeLogClient } from "../../transport/node-log-client.ts";
import { NodeWorkClient } from "../../transport/node-work-client.ts";
import { JobRunner } from "../../workflows/jobs/job-runner.ts";
import { ResendingWorkClient } from "../../workflows/jobs/resending-work-client.ts";
import { WorkResends } from "../../workflows/jobs/work-resends.ts";
import { failRefusedJobs } from "../../workflows/jobs/refused-jobs.ts";
import { jobDefaultsOf } from "../job-defaults-config.ts";
import { jobLimitsOf } from "../job-limits-config.ts";
import { CATCH_UP_STALL_MS, Later, type Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";
import type { NodeModule } from "./node-module.ts";

export interface JobModule extends Module {
  /** The job and execution actors. */
  readonly control: JobControl;
  /** The job and execution read model. */
  readonly views: JobViews;
  /** Work sent to nodes over NATS. */
  readonly work: ResendingWorkClient;
  /** Placement, dispatch, settling and cancelling: what the job flow's commands do (recover on). */
  readonly runner: Later<JobRunner>;
  /** The job read model's processor (follow on). */
  readonly lane: Later<ProcessorProgress>;
  /** Job logs read from the nodes (serve on). */
  readonly logs: Later<JobLogs>;
  /** Job results read from the nodes (serve on). */
  readonly results: Later<JobResults>;
}

/**
 * Jobs and executions: their actors, their read model and its snapshot, the job runner that carries out placement
 * and dispatch (its ledger follows the read model), the nodes' execution reports and job logs.
 */
export function jobModule(context: OrchestratorContext, offers: { readonly nodes: NodeModule }): JobModule {
  const { config, clock, store, logger, processors, deadlines, listening, transport, stops } = context;
  const { nc } = context.nats;
  const { nodes } = offers;
  const defaults = jobDefaultsOf(config);
  const limits = jobLimitsOf(config, defaults);
  // Among several orchestrators, the one running the job workflows also keeps the jobs' and executions' deadlines.
  const duty = context.cluster.duty("jobs");
  const views = new JobViews();
  const control = new JobControl({
    store,
    clock,
    logger: logger.child({ component: "jobs" }),
    deadlines,
    defaults,
    limits,
    listening,
    ...(context.cluster.clustered ? { firesDeadlines: () => duty.held } : {}),
    jobsNamed: (namespace, name) => views.index.idsNamed(namespace, name),
  });
  stops.add({ name: "stopping the job actors", run: () => control.close() });
  // Counted on /metrics by the module that owns them (shoal_actors_resident{entity="job"|"execution"}): no list
  // elsewhere for a new kind to be missing from.
  context.metrics.registerCollector("actors", () =>
    [control.jobs, control.executions].map((actors) => ({
      entity: actors.category,
      resident: actors.residentCount,
      passivated: actors.passivated,
    })),
  );
  context.metrics.registerCollector("jobs", () => views.counts.jobCounts());
  context.metrics.registerCollector("executions", () => views.counts.executionCounts());
  // Work sent again until its node answers, in one set of chains: dispatch's asks and runs, the cancels.
  const resends = new WorkResends({
    deadlines,
    clock,
    logger: logger.child({ component: "work-resends" }),
    transportDown: () => transport.down !== undefined,
    listening,
  });
  stops.add({ name: "stopping the work messages' resends", run: () => resends.stop() });
  const work = new ResendingWorkClient({
    wire: new NodeWorkClient(nc),
    resends,
    clock,
    logger: logger.child({ component: "work-cancels" }),
    answerTimeoutMs: config["Orchestrator.Scheduler.ExecutionAnswerTimeout"],
  });
  const runner = new Later<JobRunner>("the job runner", "recover");
  const lane = new Later<ProcessorProgress>("the job-views processor", "follow");
  const catchUp = new Later<CatchUp>("the job read model's catch-up", "follow");
  const logs = new Later<JobLogs>("the job logs", "serve");
  const results = new Later<JobResults>("the job results", "serve");
  // Jobs and executions: from the snapshot the last clean stop wrote (else from the start of the store).
  const snapshotPath = jobViewsSnapshotPath(config.DataDir);
  let viewsFrom = 0;

  // What another orchestrator stored (a submission or stop through its API): this one's actors would decide on a
  // stale state without it, and its deadlines are armed from the read model.
  const armChanged = (batch: readonly EventEnvelope[]) => {
    for (const e of batch) {
      const category = categoryOf(e.recorded.stream);
      const id = entityIdOf(e.recorded.stream);
      if (category === JOB_CATEGORY) {
        control.jobs.dropIfBehind(id, e.recorded.revision);
        const job = views.job(id);
        if (job) control.jobs.arm(id, job);
      } else if (category === EXECUTION_CATEGORY) {
        control.executions.dropIfBehind(id, e.recorded.revision);
        const execution = views.execution(id);
        if (execution) control.executions.arm(id, execution);
      }
    }
  };

  return {
    name: "jobs",
    control,
    views,
    work,
    runner,
    lane,
    logs,
    results,

    async recover() {
      const load = await readJobViewsSnapshot(snapshotPath, store);
      if ("snapshot" in load) views.seed(load.snapshot);
      viewsFrom = "snapshot" in load ? load.snapshot.anchor.position : 0;
      logger.info(
        { path: snapshotPath, position: viewsFrom, ...("reason" in load ? { reason: load.reason } : {}) },
        "job read model starting",
      );
      // Built on the seeded read model (its ledger starts from it).
      const jobRunner = new JobRunner({
        jobs: control.jobs,
        executions: control.executions,
        jobViews: views,
        // Read once a step runs, after the processors started (the lane is added in follow).
        jobViewsProgress: { waitFor: (position, timeoutMs) => lane.get().waitFor(position, timeoutMs) },
        nodeViews: nodes.views,
        fleet: () => nodes.fleet.view(nodes.views),
        work,
        clock,
        deadlines,
        logger: logger.child({ component: "job-runner" }),
        answerTimeoutMs: config["Orchestrator.Scheduler.ExecutionAnswerTimeout"],
        rateLimit: {
          maxPerEval: config["Orchestrator.Scheduler.MaxExecutionsPerEval"],
          backoffMs: config["Orchestrator.Scheduler.ExecutionLimitBackoff"],
        },
        resends,
        refusal: (jobId, spec) => control.storedJobRefusal(jobId, spec),
        placed: (type, sinceSubmissionMs) => context.metrics.placed(type, sinceSubmissionMs),
      });
      stops.add({ name: "stopping the job runner's resends", run: () => jobRunner.stop() });
      runner.set(jobRunner);
    },

    follow() {
      const jobRunner = runner.get();
      const from = viewsFrom;
      const jobsCatchUp = catchUp.set(
        new CatchUp({
          logger: logger.child({ component: "jobs" }),
          clock,
          head: nodes.headAtStart.get(),
          message: "recovering jobs: replaying events",
          stallMs: CATCH_UP_STALL_MS,
        }),
      );
      lane.set(
        jobsCatchUp.follow(processors, {
          name: "job-views",
          checkpoints: { load: () => Promise.resolve(from), save: () => Promise.resolve() },
          handle: (batch) => {
            try {
              for (const e of batch) views.handleEnvelope(e);
              // Among several orchestrators, a job another one changed (a submission, a stop) is armed here too.
              if (context.cluster.clustered && duty.held) armChanged(batch);
            } finally {
              // The capacity ledger placement uses follows the read model, execution by execution (also what folded
              // before a failure).
              jobRunner.readModelFolded(batch);
            }
          },
        }),
      );
    },

    async catchUp() {
      const progress = catchUp.get();
      // A corrupt job or execution event stops start-up here, named (the views cannot fold past it).
      await progress.until(nodes.startPosition.get());
      logger.info(
        { jobs: views.index.size, from: viewsFrom, ...progress.elapsed() },
        "recovered jobs from the event store",
      );
    },

    async arm() {
      // Before anything is placed or sent: a stored job today's limits refuse ends here, with the reason.
      await failRefusedJobs(views.allJobs(), control, logger.child({ component: "job-limits" }));
      // The read model folded every job and execution with their deciders' evolve: their deadlines are armed from it
      // (again whenever this orchestrator takes the jobs duty over from another).
      await duty.whileHeld("arming the jobs' deadlines", () => {
        control.armRecovered(views.allJobs(), views.allExecutions());
        logger.info({ jobs: views.index.size }, "jobs read model caught up; their deadlines are armed");
      });
    },

    listen() {
      if (!context.takeExecutionReports) return;
      const onActors = new ExecutionReportsOnActors(control.executions, (id) => work.ended(id));
      const reports = new ExecutionReportHandler(nc, onActors, {
        enforcesNodeKeys: context.nats.access !== undefined,
        logger: logger.child({ component: "execution-reports" }),
        ...(context.cluster.clustered ? { takesReports: () => duty.held } : {}),
      });
      reports.start();
      stops.add({
        name: "stopping the execution reports",
        run: () => reports.stop(),
        timeoutMs: NATS_DRAIN_TIMEOUT_MS,
      });
    },

    serve() {
      // Job logs are read from the nodes over NATS (docs/jobs.md, Logs).
      const nodeLogs = new NodeLogClient(nc, logger.child({ component: "job-logs" }));
      nodeLogs.start();
      stops.add({ name: "stopping the job log reads", run: () => nodeLogs.stop() });
      logs.set(new JobLogs(views, nodeLogs, { clock, deadlines }));
      results.set(new JobResults(views, nodeLogs));
    },

    snapshot: {
      name: "job-views",
      write: async () => {
        const snapshot = views.snapshot();
        if (snapshot) await writeJobViewsSnapshot(snapshotPath, snapshot);
      },
    },
  };
}
