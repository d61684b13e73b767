import { onDuty } from "../../cluster/on-duty.ts";
import { nodeReactions } from "../../workflows/nodes/node-reactions.ts";
import { NodeReactionRunner } from "../../workflows/nodes/node-reaction-runner.ts";
import { afterReadModel } from "../../workflows/after-read-model.ts";
import { WorkflowHost } from "../../workflows/workflow-host.ts";
import { Later, type Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";
import type { JobModule } from "./job-module.ts";
import type { NodeModule } from "./node-module.ts";

/** How often every node holding work is checked against its state (what no workflow step covered). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Work follows node state: lost with a silent (rate-limited), rejected or deleted node, stopped when it is back,
 * daemons follow labels (docs/jobs.md, Node reactions).
 */
export function nodeReactionsModule(
  context: OrchestratorContext,
  offers: { readonly nodes: NodeModule; readonly jobs: JobModule },
): Module {
  const { config, clock, store, logger, processors, deadlines, listening, stops } = context;
  const { nodes, jobs } = offers;
  const runner = new Later<NodeReactionRunner>("the node reactions", "follow");
  const duty = context.cluster.duty("jobs");
  return {
    name: "node reactions",

    async follow() {
      const jobRunner = jobs.runner.get();
      const reactions = new NodeReactionRunner({
        work: jobRunner,
        byNode: jobs.views.byNode,
        byNodeProgress: jobs.lane.get(),
        nodeViews: nodes.views,
        store,
        deadlines,
        clock,
        logger: logger.child({ component: "node-reactions" }),
        transportDown: () => listening.since === undefined,
        policy: {
          rate: config["Orchestrator.NodeManager.NodeEvictionRate"],
          secondaryRate: config["Orchestrator.NodeManager.SecondaryNodeEvictionRate"],
          unhealthyThreshold: config["Orchestrator.NodeManager.UnhealthyNodesThreshold"],
          largeClusterSize: config["Orchestrator.NodeManager.LargeClusterSizeThreshold"],
        },
      });
      runner.set(reactions);
      stops.add({ name: "stopping the node reactions", run: () => reactions.stop() });
      // As the node manager gives every node its grace and a full DisconnectTimeout after a start, so does the queue
      // of silent nodes.
      const disconnectMs = config["Orchestrator.NodeManager.DisconnectTimeout"];
      const grace = () => reactions.holdUntil(Math.max(clock.now(), nodes.manager.silenceCountsFrom) + disconnectMs);
      grace();
      // After the node manager's own listener (the node module is built first): its grace is the one this follows.
      listening.onResume(grace);
      listening.onPause(() => reactions.wake());
      // The silent nodes' queue as the last run left it (under the grace above), before the workflow's replayed steps
      // apply onto it.
      await reactions.recover();
      // Whether a node holds work is asked of the job read model once it has folded the node's event: every execution
      // placed on the node before it is counted.
      processors.add(
        onDuty(
          afterReadModel(
            new WorkflowHost(nodeReactions(jobs.views.byNode), {
              store,
              checkpoints: store,
              handlers: reactions.handlers(),
              // Its steps and the queue's records share one stream: one writer keeps its revision.
              steps: reactions.steps,
              logger: logger.child({ component: "workflows" }),
            }),
            jobs.lane.get(),
          ),
          duty,
        ),
      );
    },

    async arm() {
      const reactions = runner.get();
      const stopSweeps = await duty.whileHeld("the node-work checks", async () => {
        // Executions on nodes deleted or rejected while the orchestrator was down are lost as well; silent nodes'
        // wait again.
        await reactions.sweep("found at start-up");
        return deadlines.every("node-work-sweep", SWEEP_EVERY_MS, () =>
          reactions
            .sweep("found by the periodic check")
            .catch((err: unknown) => logger.error({ err }, "checking for nodes' lost work failed")),
        );
      });
      stops.add({ name: "stopping the node-work checks", run: stopSweeps });
    },
  };
}
