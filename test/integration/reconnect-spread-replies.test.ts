import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";

/**
 * Every accepted reply tells the node how far to spread its reconnects (docs/protocol.md,
 * Reconnecting): the connected fleet over Orchestrator.NodeManager.ReconnectLoginsPerSecond.
 */
const TOKEN = "spread-token";
let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await TestNatsServer.start();
  orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, {
      "Orchestrator.Auth.Token": TOKEN,
      "Orchestrator.NodeManager.ReconnectLoginsPerSecond": 1,
    }),
    silentLogger,
  );
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.drain();
  await orchestrator?.stop();
  await nats?.stop();
});

describe("the reconnect spread in accepted replies", () => {
  it("grows with the nodes connected, and leaves out the nodes an operator rejected", async () => {
    // Connected nodes once each join is stored, at one login a second: that many seconds.
    expect(await joinNode(nc, "s1", TOKEN)).toEqual({
      Accepted: true,
      Reason: "node registered",
      Reconnect: false,
      ReconnectSpread: 1,
    });
    expect(await joinNode(nc, "s2", TOKEN)).toMatchObject({ Accepted: true, ReconnectSpread: 2 });
    await joinNode(nc, "s3", TOKEN);
    const client = new ComputeClient(nc, "s1");
    const report = {
      AvailableCapacity: { CPU: 1 },
      QueueUsedCapacity: {},
      RunningExecutions: 0,
      EnqueuedExecutions: 0,
    };
    expect(await client.updateResources(report)).toEqual({ Accepted: true, ReconnectSpread: 3 });
    expect(await client.heartbeatRequest()).toEqual({ Accepted: true, ReconnectSpread: 3 });
    await orchestrator.manager.operatorAction("reject", "s3", commandContext({ type: "operator", id: "alice" }));
    expect(await client.updateResources(report)).toEqual({ Accepted: true, ReconnectSpread: 2 });
  });
});
