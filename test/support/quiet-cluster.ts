import { connect, type NatsConnection } from "nats";
import { expect } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { computeInfo, orchestratorConfig, silentLogger } from "./fixtures.ts";
import { joinNode } from "./join-node.ts";
import { TestNatsServer } from "./nats-server.ts";

const TOKEN = "s3cret";

/**
 * A real orchestrator in this process, on a nats-server of its own, for tests that act as API users and read the log
 * between their acts: nodes join under manual approval and never heartbeat, and no health change or queue timeout
 * lands while the test reads, so everything stored is what an act caused.
 */
export interface QuietCluster {
  readonly config: ShoalConfig;
  /** A test that restarts the orchestrator puts the new one here; `stop` stops whichever runs. */
  orchestrator: RunningOrchestrator;
  /** Joins a node over NATS (labels on top of the usual compute info); it must be accepted. */
  join(nodeId: string, labels?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

export async function startQuietCluster(users: readonly AuthUser[]): Promise<QuietCluster> {
  const nats = await TestNatsServer.start();
  const config = orchestratorConfig(nats.url, {
    "Orchestrator.Auth.Token": TOKEN,
    "Orchestrator.NodeManager.ManualApproval": true,
    "Orchestrator.NodeManager.DisconnectTimeout": 3_600_000,
    "Orchestrator.NodeManager.UnknownTimeout": 7_200_000,
    "API.Auth.Users": [...users],
    "JobDefaults.Batch.Task.Timeouts.QueueTimeout": 3_600_000,
  });
  const orchestrator = await startOrchestrator(config, silentLogger);
  let nc: NatsConnection | undefined;
  try {
    nc = await connect({ servers: nats.url });
  } catch (error) {
    await orchestrator.stop();
    await nats.stop();
    throw error;
  }
  const client = nc;
  const cluster: QuietCluster = {
    config,
    orchestrator,
    async join(nodeId, labels = {}) {
      expect(await joinNode(client, nodeId, TOKEN, computeInfo(nodeId, labels))).toMatchObject({ Accepted: true });
    },
    async stop() {
      await client.drain();
      await cluster.orchestrator.stop();
      await nats.stop();
    },
  };
  return cluster;
}
