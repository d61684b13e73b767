import { onDuty } from "../../cluster/on-duty.ts";
import { drainFlow } from "../../workflows/nodes/drain-flow.ts";
import { NodeDrainer } from "../../workflows/nodes/node-drainer.ts";
import { WorkflowHost } from "../../workflows/workflow-host.ts";
import { Later, type Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";
import type { JobModule } from "./job-module.ts";
import type { NodeModule } from "./node-module.ts";

/** Node drains (docs/nodes.md, Drain): a recorded workflow, and a pass per drain under way as executions change. */
export function drainModule(
  context: OrchestratorContext,
  offers: { readonly nodes: NodeModule; readonly jobs: JobModule },
): Module {
  const { clock, store, logger, processors, deadlines } = context;
  const { nodes, jobs } = offers;
  const drainer = new Later<NodeDrainer>("the node drainer", "follow");
  const duty = context.cluster.duty("jobs");
  return {
    name: "drain",

    follow() {
      const jobRunner = jobs.runner.get();
      const nodeDrainer = new NodeDrainer({
        manager: nodes.manager,
        nodeViews: nodes.views,
        nodeViewsProgress: nodes.lane.get(),
        jobViews: jobs.views,
        executions: jobs.control.executions,
        work: jobs.work,
        place: (jobId, by) => jobRunner.placeFor(jobId, by),
        placeableElsewhere: (e) => jobRunner.placeableElsewhere(e),
        deadlines,
        clock,
        logger: logger.child({ component: "node-drain" }),
      });
      drainer.set(nodeDrainer);
      processors.add(
        onDuty(
          new WorkflowHost(drainFlow, {
            store,
            checkpoints: store,
            handlers: nodeDrainer.handlers(),
            logger: logger.child({ component: "workflows" }),
          }),
          duty,
        ),
      );
      const nodesFrom = nodes.headAtStart.get();
      processors.add({
        name: nodeDrainer.name,
        checkpoints: { load: () => Promise.resolve(nodesFrom), save: () => Promise.resolve() },
        handle: (batch) => (duty.held ? nodeDrainer.handle(batch) : undefined),
      });
    },

    async arm() {
      // Drains under way: their deadlines armed again from the nodes' state, and a pass each (at start, or when this
      // orchestrator takes the job workflows over from another).
      await duty.whileHeld("the drains under way", () => drainer.get().recover());
    },
  };
}
