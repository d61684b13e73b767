import { existsSync } from "node:fs";
import { join } from "node:path";
import { createServer } from "node:net";
import { connect } from "nats";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import type { ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { testAgent } from "../support/test-agent.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer, freePort } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A real pino logger whose records the test can read. */
function recordingLogger() {
  const records: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, records };
}

function agent(natsUrl: string, dataDir: string, token = "", logger = silentLogger): ComputeAgent {
  const a = testAgent({ nodeId: "edge-1", orchestrators: [natsUrl], token, labels: { zone: "edge" }, dataDir, logger });
  cleanups.push(() => a.stop());
  return a;
}

async function orchestratorOn(natsUrl: string, extra: Partial<ShoalConfig> = {}): Promise<RunningOrchestrator> {
  const o = await startOrchestrator(orchestratorConfig(natsUrl, extra), silentLogger);
  cleanups.push(() => o.stop());
  return o;
}

describe("compute agent", () => {
  it("retries registration with backoff until an orchestrator answers, then keeps the sentinel file", async () => {
    const nats = await TestNatsServer.start();
    cleanups.push(() => nats.stop());
    const dataDir = tempDir();
    const a = agent(nats.url, dataDir, "join-me");
    const started = a.start();
    await new Promise((r) => setTimeout(r, 500)); // nobody is listening yet: no responders
    expect(a.isRegistered).toBe(false);
    const o = await orchestratorOn(nats.url, { "Orchestrator.Auth.Token": "join-me" });
    await started;
    expect(a.isRegistered).toBe(true);
    expect(existsSync(join(dataDir, "edge-1.registration.lock"))).toBe(true);
    await waitFor(
      () => o.manager.live("edge-1")?.resources !== undefined,
      5000,
      () => "resources reported",
    );
    expect(o.manager.live("edge-1")?.lastHeartbeat).not.toBeNull();
  });

  it("stops with the reason when the orchestrator refuses its token", async () => {
    const nats = await TestNatsServer.start();
    cleanups.push(() => nats.stop());
    await orchestratorOn(nats.url, { "Orchestrator.Auth.Token": "right" });
    await expect(agent(nats.url, tempDir(), "wrong").start()).rejects.toThrow(
      "orchestrator refused node edge-1: join refused: the proof does not match the orchestrator's join token (Compute.Auth.Token)",
    );
  });
});

describe("compute agent and the orchestrator's registration limits", () => {
  it("retries a registration refused as Unavailable (too many new nodes at once) until it is admitted", async () => {
    const nats = await TestNatsServer.start();
    cleanups.push(() => nats.stop());
    const o = await orchestratorOn(nats.url, {
      "Orchestrator.Auth.Token": "t",
      "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 1,
      "Orchestrator.NodeManager.RegistrationBurst": 1,
    });
    const nc = await connect({ servers: nats.url });
    cleanups.push(() => nc.drain());
    expect(await joinNode(nc, "first", "t")).toMatchObject({ Accepted: true });

    const { logger, records } = recordingLogger();
    await agent(nats.url, tempDir(), "t", logger).start();
    expect(o.manager.live("edge-1")).toBeDefined();
    const refusals = records.filter((r) => r.msg === "join refused; will retry");
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals[0]).toMatchObject({
      code: "Unavailable",
      reason: expect.stringMatching(/too many new nodes registering/),
    });
  });

  it("keeps retrying, at its slowest pace, while the orchestrator holds too many PENDING nodes", async () => {
    const nats = await TestNatsServer.start();
    cleanups.push(() => nats.stop());
    const o = await orchestratorOn(nats.url, {
      "Orchestrator.Auth.Token": "t",
      "Orchestrator.NodeManager.ManualApproval": true,
      "Orchestrator.NodeManager.MaxPendingNodes": 1,
    });
    const nc = await connect({ servers: nats.url });
    cleanups.push(() => nc.drain());
    expect(await joinNode(nc, "squatter", "t")).toMatchObject({ Accepted: true });

    const { logger, records } = recordingLogger();
    const a = agent(nats.url, tempDir(), "t", logger);
    const started = a.start();
    await waitFor(
      () => records.filter((r) => r.msg === "join refused; will retry").length >= 2,
      10_000,
      () => "two refusals",
    );
    expect(a.isRegistered).toBe(false);
    for (const r of records.filter((r) => r.msg === "join refused; will retry")) {
      expect(r).toMatchObject({
        code: "Forbidden",
        backoffMs: 400,
        reason: expect.stringMatching(/Orchestrator.NodeManager.MaxPendingNodes/),
      });
      expect(r.retryInMs).toBeLessThanOrEqual(400);
    }
    await o.manager.operatorAction("delete", "squatter", commandContext({ type: "operator", id: "alice" }));
    await started;
    expect(a.isRegistered).toBe(true);
  });
});

describe("embedded nats-server", () => {
  it("says clearly when its port is taken", async () => {
    const port = await freePort();
    const blocker = createServer().listen(port, "127.0.0.1");
    cleanups.push(() => new Promise((r) => blocker.close(r)));
    await new Promise((r) => blocker.once("listening", r));
    await expect(
      EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir: tempDir(), logger: silentLogger }),
    ).rejects.toThrow(`Orchestrator.Port ${port} on 127.0.0.1 is already in use`);
  });

  it("says clearly when the nats-server binary is missing", async () => {
    await expect(
      EmbeddedNatsServer.start({
        host: "127.0.0.1",
        port: await freePort(),
        dir: tempDir(),
        logger: silentLogger,
        binary: "nats-server-not-installed",
      }),
    ).rejects.toThrow("nats-server was not found on PATH");
  });
});

describe("compute agent reconnecting (docs/protocol.md, Reconnecting)", () => {
  it("waits 1 s plus its own share of the announced spread between attempts, so a fleet comes back spread out", async () => {
    const port = await freePort();
    const dir = tempDir();
    let server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger });
    cleanups.push(() => server.stop());
    // Six connected nodes at one login a second: a 6 s spread, told in every accepted reply.
    const o = await orchestratorOn(server.url, {
      "Orchestrator.Auth.Token": "spread",
      "Orchestrator.NodeManager.ReconnectLoginsPerSecond": 1,
    });
    const nc = await connect({ servers: server.url });
    cleanups.push(() => nc.close());
    for (const id of ["p1", "p2", "p3", "p4"]) await joinNode(nc, id, "spread");
    const late = testAgent({
      nodeId: "late",
      orchestrators: [server.url],
      token: "spread",
      heartbeatMs: 300,
      reconnectDraw: () => 0.99,
    });
    const early = testAgent({
      nodeId: "early",
      orchestrators: [server.url],
      token: "spread",
      heartbeatMs: 300,
      reconnectDraw: () => 0,
    });
    cleanups.push(
      () => late.stop(),
      () => early.stop(),
    );
    await late.start();
    await early.start();
    expect(o.manager.reconnectSpreadMs()).toBe(6_000);
    // A resource report's reply (every 500 ms) has told both the 6 s spread.
    await new Promise((r) => setTimeout(r, 1_500));

    await server.stop();
    server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger });
    const upAt = Date.now();
    const firstBeat = async (id: string): Promise<number> => {
      await waitFor(
        () => (o.manager.live(id)?.lastHeartbeat ?? 0) > upAt,
        20_000,
        () => `a heartbeat of ${id} after NATS was back`,
      );
      return o.manager.live(id)!.lastHeartbeat! - upAt;
    };
    const [lateMs, earlyMs] = await Promise.all([firstBeat("late"), firstBeat("early")]);
    // The early node tries every 1 s; the late one every 1 s + 0.99 × 6 s = 6.94 s, counted from its first failed
    // attempt.
    expect(earlyMs).toBeLessThan(3_500);
    expect(lateMs).toBeGreaterThan(4_000);
  }, 60_000);
});
