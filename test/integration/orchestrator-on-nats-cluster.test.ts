import { afterAll, expect, it } from "vitest";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { TestNatsCluster } from "../support/nats-cluster.ts";
import { testAgent } from "../support/test-agent.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/**
 * Orchestrator.NATS.URL as docker-compose.yml gives it: the servers of one NATS cluster, comma-separated. Taken as
 * one URL, the client would hold only the last server named, and could not start while that one is down.
 */
it("starts on a NATS cluster named by a comma-separated list while the last server named is down", async () => {
  const cluster = await TestNatsCluster.start();
  cleanups.push(() => cluster.stop());
  await cluster.shutDown("n3");
  // As an operator would find it: the two left have agreed on a JetStream leader (n3 may have been it).
  await cluster.waitForJetStream();
  const config = orchestratorConfig(cluster.urls.join(","), {
    "Orchestrator.Auth.Token": "join-me",
    "Orchestrator.NATS.JetStreamMaxStore": 64 * 1024 * 1024,
  });
  const orchestrator = await startOrchestrator(config, silentLogger);
  cleanups.push(() => orchestrator.stop());
  const agent = testAgent({ nodeId: "edge-1", orchestrators: cluster.urls, token: "join-me" });
  cleanups.push(() => agent.stop());
  await agent.start();
  expect(orchestrator.manager.isRegistered("edge-1")).toBe(true);
  // 6 s alone; past 30 s twice on a busy machine (three servers starting, a JetStream leader elected again).
}, 90_000);
