import { afterAll, beforeAll, describe, it, type TestContext } from "vitest";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { VirtualFleet } from "../../src/sim/virtual-fleet.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { FaultyProxy, type ConnectionFault } from "../support/faulty-proxy.ts";
import { silentLogger } from "../support/fixtures.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { waitFor } from "../support/shoal-process.ts";
import { testAgent } from "../support/test-agent.ts";

const RETRY = "could not join yet; will retry";

/** A test agent behind `url`, logging to a captured logger, stopped after the test. */
function agentOn({ onTestFinished }: TestContext, url: string, nodeId: string, token: string) {
  const log = capturedLogger();
  const agent = testAgent({ nodeId, orchestrators: [url], token, logger: log.logger });
  onTestFinished(() => agent.stop());
  return { agent, ...log };
}

/** A proxy to the orchestrator's nats-server that stalls the first `stalled` logins, stopped after the test. */
async function stallingProxy({ onTestFinished }: TestContext, natsUrl: string, stalled: number) {
  const proxy = await FaultyProxy.start(natsUrl, Array<ConnectionFault>(stalled).fill("stall-login"));
  onTestFinished(() => proxy.stop());
  return proxy;
}

// Each test waits out a stalled login (the agent's login wait is the server's login deadline and a little more):
// they wait side by side, each with its own proxy, agent and node IDs.
describe.concurrent("compute agent behind an orchestrator's nats-server that times logins out", () => {
  let orchestrator: RunningOrchestrator;
  beforeAll(async () => {
    const config = await ownNatsOrchestratorConfig("shoal-overload-", { "Orchestrator.Auth.Token": "right" });
    orchestrator = await startOrchestrator(config, silentLogger);
  });
  afterAll(() => orchestrator.stop());

  it("joins once logins get through, logging each retry with its attempt and delay", async (context) => {
    const { expect } = context;
    const proxy = await stallingProxy(context, orchestrator.natsUrl, 1);
    const { agent, messages } = agentOn(context, proxy.url, "stalled-1", "right");
    await agent.start();
    expect(agent.isRegistered).toBe(true);
    expect(orchestrator.manager.live("stalled-1")).toBeDefined();
    const retries = messages(RETRY);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ level: 40, attempt: 1, code: "TIMEOUT", backoffMs: 100 });
    expect(retries[0]?.retryInMs).toBeGreaterThanOrEqual(0);
    expect(retries[0]?.retryInMs).toBeLessThanOrEqual(100);
    expect(proxy.accepted).toBeGreaterThan(1);
  });

  it("still stops at a wrong token, with the reason, after the stall", async (context) => {
    const { expect } = context;
    const proxy = await stallingProxy(context, orchestrator.natsUrl, 1);
    const { agent, messages } = agentOn(context, proxy.url, "stalled-2", "wrong");
    await expect(agent.start()).rejects.toThrow(
      "the orchestrator's NATS refused the join token: check Compute.Auth.Token",
    );
    expect(messages(RETRY).map((r) => r.code)).toEqual([
      "TIMEOUT",
      "AUTHORIZATION_VIOLATION",
      "AUTHORIZATION_VIOLATION",
      "AUTHORIZATION_VIOLATION",
    ]);
    expect(orchestrator.manager.live("stalled-2")).toBeUndefined();
  });
  it("in a virtual fleet: every node joins after the stall, failures counted by code, not logged", async (context) => {
    const { expect } = context;
    const proxy = await stallingProxy(context, orchestrator.natsUrl, 3);
    const { logger, records } = capturedLogger();
    const fleet = new VirtualFleet({
      nodes: 3,
      idPrefix: "stalled-fleet",
      orchestrators: [proxy.url],
      token: "right",
      heartbeatMs: 500,
      jitterMs: 0,
      infoUpdateMs: 5000,
      resourceUpdateMs: 5000,
      joinRatePerSecond: 100,
      initialBackoffMs: 100,
      maxBackoffMs: 400,
      logger,
    });
    context.onTestFinished(() => fleet.stop());
    fleet.start();
    await waitFor(
      () => fleet.progress().registered === 3,
      20_000,
      () => `3 registered: ${JSON.stringify(fleet.progress())}`,
    );
    expect(fleet.progress()).toMatchObject({ gaveUp: 0, failed: 3, failedJoinsByCode: { TIMEOUT: 3 } });
    expect(records.filter((r) => r.msg === RETRY)).toEqual([]);
  });
});
