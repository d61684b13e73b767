import type { Module } from "./module.ts";
import type { OrchestratorContext } from "./orchestrator-context.ts";
import { type ApiModule, apiModule } from "./modules/api-module.ts";
import { auditModule } from "./modules/audit-module.ts";
import { clusterModule } from "./modules/cluster-module.ts";
import { drainModule } from "./modules/drain-module.ts";
import { type EventPublisherModule, eventPublisherModule } from "./modules/event-publisher-module.ts";
import { eventStreamModule } from "./modules/event-stream-module.ts";
import { forgetDeletedNodesModule } from "./modules/forget-deleted-nodes-module.ts";
import { jobFlowModule } from "./modules/job-flow-module.ts";
import { natsTlsModule } from "./modules/nats-tls-module.ts";
import { type JobModule, jobModule } from "./modules/job-module.ts";
import { type NodeModule, nodeModule } from "./modules/node-module.ts";
import { nodeReactionsModule } from "./modules/node-reactions-module.ts";

export interface OrchestratorModules {
  readonly nodes: NodeModule;
  readonly publisher: EventPublisherModule;
  readonly jobs: JobModule;
  readonly api: ApiModule;
  /** Every module, in the order each phase runs their steps. */
  readonly list: readonly Module[];
}

/**
 * The orchestrator's entities and processes. Each is built from the shared context and what the modules it needs
 * offer; each phase runs their steps in this list's order (docs/core.md, Modules).
 */
export function orchestratorModules(context: OrchestratorContext): OrchestratorModules {
  const nodes = nodeModule(context);
  const publisher = eventPublisherModule(context);
  const jobs = jobModule(context, { nodes });
  const streams = eventStreamModule(context, { nodes });
  const cluster = clusterModule(context);
  const api = apiModule(context, { nodes, jobs, publisher, streams, cluster });
  const list: readonly Module[] = [
    // First: its leases are handed back after every processor stopped (stop steps run last added first).
    cluster,
    nodes,
    // Its JetStream check stops start-up before anything else follows the store.
    publisher,
    auditModule(context, { nodes }),
    jobs,
    forgetDeletedNodesModule(context, { nodes }),
    nodeReactionsModule(context, { nodes, jobs }),
    drainModule(context, { nodes, jobs }),
    // After node reactions and drain: lost work is found and drains resume before dispatch resumes at start.
    jobFlowModule(context, { nodes, jobs }),
    streams,
    natsTlsModule(context),
    // Last: nothing is served before every read model caught up and every deadline is armed.
    api,
  ];
  return { nodes, publisher, jobs, api, list };
}
