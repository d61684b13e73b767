import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "nats";
import { afterEach, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import { goRuntimeEnv } from "../../src/transport/go-runtime-env.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { testAgent } from "../support/test-agent.ts";
import { TestNatsServer, freePort } from "../support/nats-server.ts";
import { holdPort, killLater, processRunning, readPid } from "../support/processes.ts";
import { waitFor } from "../support/shoal-process.ts";
import { storedStream } from "../support/stored-events.ts";

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The test's last resort for a child it stopped or that a failing assertion left behind. */
function killOnCleanup(pid: number): void {
  cleanups.push(killLater(pid));
}

async function get(base: string, path: string): Promise<{ status: number; body: any; retryAfter: string | null }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: await res.json(), retryAfter: res.headers.get("retry-after") };
}

async function orchestratorWithEmbeddedNats(logger = capturedLogger().logger, extra: Partial<ShoalConfig> = {}) {
  const dataDir = tempDir();
  const natsPort = await freePort();
  const o = await startOrchestrator(
    {
      ...defaultConfig(),
      DataDir: dataDir,
      NodeID: "node-0",
      "API.Host": "127.0.0.1",
      "API.TLS.Disable": true, // TLS is not under test here
      "Orchestrator.NATS.TLS.Disable": true,
      "API.Port": 0,
      "Orchestrator.Host": "127.0.0.1",
      "Orchestrator.Port": natsPort,
      "Orchestrator.NodeManager.DisconnectTimeout": 2_000,
      "Orchestrator.NodeManager.UnknownTimeout": 4_000,
      ...extra,
    },
    logger,
  );
  cleanups.push(() => o.stop());
  const pidFile = join(dataDir, "nats", "nats-server.pid");
  killOnCleanup(readPid(pidFile));
  return { o, natsPort, pidFile, dataDir };
}

async function attachAgent(o: RunningOrchestrator, nodeId = "edge-1"): Promise<ComputeAgent> {
  const agent = testAgent({ nodeId, orchestrators: [o.natsUrl], token: o.joinToken.token });
  cleanups.push(() => agent.stop());
  await agent.start();
  return agent;
}

describe("the embedded nats-server is supervised", () => {
  it("restarts a killed nats-server on the same port with its JetStream data, and clients reconnect", async () => {
    const { logger, messages } = capturedLogger();
    const server = await EmbeddedNatsServer.start({
      host: "127.0.0.1",
      port: await freePort(),
      dir: tempDir(),
      logger,
    });
    cleanups.push(() => server.stop());
    const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    cleanups.push(() => nc.close());
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: "KEEP", subjects: ["keep.>"] });
    await nc.jetstream().publish("keep.1", new TextEncoder().encode("kept"));
    const seen: boolean[] = [];
    server.onStateChange((s) => seen.push(s.running));

    const first = server.pid!;
    expect(readPid(server.pidFile)).toBe(first);
    process.kill(first, "SIGKILL");
    await waitFor(
      () => server.state.running && server.pid !== first,
      10_000,
      () => "a restarted nats-server",
    );
    killOnCleanup(server.pid!);

    expect(seen).toEqual([false, true]);
    expect(server.restarts).toBe(1);
    expect(messages("exited unexpectedly")).toEqual([
      expect.objectContaining({ pid: first, signal: "SIGKILL", restartInMs: 250 }),
    ]);
    expect(messages("embedded nats-server restarted")).toEqual([
      expect.objectContaining({ pid: server.pid, restarts: 1 }),
    ]);
    await waitFor(
      () => readPid(server.pidFile) === server.pid,
      5000,
      () => "the new pid in the pid file",
    );
    expect(server.url).toBe(`nats://127.0.0.1:${new URL(server.url).port}`);
    // The client reconnects to the same URL and JetStream kept its data.
    await waitFor(
      () =>
        nc.flush().then(
          () => true,
          () => false,
        ),
      10_000,
      () => "the client to reconnect",
    );
    expect((await jsm.streams.info("KEEP")).state.messages).toBe(1);
  });

  it("runs the nats-server with the Go runtime settings of Orchestrator.NATS.GOGC and GOMEMLIMIT, and restarts it with them", async () => {
    const environment = (pid: number) =>
      readFileSync(`/proc/${pid}/environ`, "utf8")
        .split("\0")
        .filter((e) => e.startsWith("GOGC=") || e.startsWith("GOMEMLIMIT="));
    const { o, pidFile } = await orchestratorWithEmbeddedNats(undefined, {
      "Orchestrator.NATS.GOGC": 50,
      "Orchestrator.NATS.GOMEMLIMIT": 256 * 1024 * 1024,
    });
    const first = readPid(pidFile);
    expect(environment(first).sort()).toEqual(["GOGC=50", "GOMEMLIMIT=268435456B"]);
    process.kill(first, "SIGKILL");
    await waitFor(
      () => processRunning(readPid(pidFile)) && readPid(pidFile) !== first,
      15_000,
      () => "a restarted nats-server",
    );
    killOnCleanup(readPid(pidFile));
    expect(environment(readPid(pidFile)).sort()).toEqual(["GOGC=50", "GOMEMLIMIT=268435456B"]);
    expect(o.natsUrl).toMatch(/^nats:/);
  });

  it("leaves the nats-server's Go runtime to Go by default", async () => {
    const server = await EmbeddedNatsServer.start({
      host: "127.0.0.1",
      port: await freePort(),
      dir: tempDir(),
      logger: silentLogger,
      env: goRuntimeEnv(0, 0),
    });
    cleanups.push(() => server.stop());
    const env = readFileSync(`/proc/${server.pid!}/environ`, "utf8").split("\0");
    expect(env.filter((e) => e.startsWith("GOGC=") || e.startsWith("GOMEMLIMIT="))).toEqual(
      [
        process.env.GOGC === undefined ? [] : [`GOGC=${process.env.GOGC}`],
        process.env.GOMEMLIMIT === undefined ? [] : [`GOMEMLIMIT=${process.env.GOMEMLIMIT}`],
      ].flat(),
    );
  });

  it("keeps trying with a growing delay while it cannot start, and stop() ends supervision", async () => {
    const { logger, messages } = capturedLogger();
    const port = await freePort();
    const server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir: tempDir(), logger });
    cleanups.push(() => server.stop());
    const first = server.pid!;
    process.kill(first, "SIGKILL");
    const blocker = await holdPort(port);
    cleanups.push(() => blocker.release());
    await waitFor(
      () => messages("could not restart").length >= 2,
      10_000,
      () => "two failed restarts",
    );
    expect(messages("exited unexpectedly")[0]).toMatchObject({ restartInMs: 250 });
    expect(messages("could not restart").slice(0, 2)).toEqual([
      expect.objectContaining({ restartInMs: 500, reason: `Orchestrator.Port ${port} is already in use` }),
      expect.objectContaining({ restartInMs: 1000 }),
    ]);
    expect(server.state).toMatchObject({ running: false, reason: expect.stringContaining("could not be restarted") });

    await blocker.release();
    await waitFor(
      () => server.state.running,
      10_000,
      () => "the nats-server to come back once its port is free",
    );
    const second = server.pid!;
    killOnCleanup(second);
    await server.stop();
    expect(processRunning(second)).toBe(false);
    // Nothing restarts it after stop(): well past the first restart delay, its port is still free.
    await new Promise((r) => setTimeout(r, 1000));
    const probe = await holdPort(port);
    await probe.release();
    expect(server.pid).toBe(second);
  });
});

describe("the orchestrator during its own NATS outage", () => {
  it("blames no node for the outage, reports it on alive and ready while it lasts, and recovers", async () => {
    const { logger, messages } = capturedLogger();
    const { o, natsPort, pidFile, dataDir } = await orchestratorWithEmbeddedNats(logger);
    await attachAgent(o);
    const ready = await get(o.apiUrl, "/api/v1/agent/ready");
    expect(ready.status).toBe(200);
    expect(ready.body.Checks.map((c: any) => [c.Name, c.Status])).toEqual([
      ["nats", "OK"],
      ["nats-server", "OK"],
      ["jetstream", "OK"],
      ["store", "OK"],
    ]);
    expect(await get(o.apiUrl, "/api/v1/agent/alive")).toMatchObject({ status: 200, body: { Status: "OK" } });

    // kill -9 the child, and keep it from coming back until the outage is longer than both timeouts.
    const killedAt = Date.now();
    process.kill(readPid(pidFile), "SIGKILL");
    const blocker = await holdPort(natsPort);
    cleanups.push(() => blocker.release());

    await waitFor(
      async () => (await get(o.apiUrl, "/api/v1/agent/alive")).status === 503,
      5000,
      () => "alive to fail",
    );
    const alive = await get(o.apiUrl, "/api/v1/agent/alive");
    expect(alive.body).toMatchObject({
      Status: 503,
      Code: "Unavailable",
      Message: expect.stringMatching(/^not alive: .*nats-server: nats-server (exited|could not be restarted)/),
    });
    expect(alive.retryAfter).toBe("5");
    const natsCheck = (r: { body: any }) => r.body.Details?.Checks.find((c: any) => c.Name === "nats");
    await waitFor(
      async () => natsCheck(await get(o.apiUrl, "/api/v1/agent/ready"))?.Reason.startsWith("disconnected"),
      5000,
      () => "the disconnect to show",
    );
    const down = await get(o.apiUrl, "/api/v1/agent/ready");
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ Code: "Unavailable", Message: expect.stringContaining("not ready") });
    const checks = Object.fromEntries(down.body.Details.Checks.map((c: any) => [c.Name, c]));
    expect(checks.nats).toMatchObject({
      Status: "FAILING",
      Reason: expect.stringContaining("disconnected from nats://127.0.0.1:"),
    });
    expect(checks["nats-server"]).toMatchObject({
      Status: "FAILING",
      Reason: expect.stringMatching(/nats-server (exited \(SIGKILL\)|could not be restarted)/),
    });
    expect(checks.store).toMatchObject({ Status: "OK" });

    await waitFor(
      () => Date.now() - killedAt > 4_500,
      10_000,
      () => "an outage longer than UnknownTimeout",
    );
    await blocker.release();
    await waitFor(
      () => messages("embedded nats-server restarted").length === 1,
      15_000,
      () => "the restart",
    );
    const backAt = Date.now();
    await waitFor(
      () => (o.manager.live("edge-1")?.lastHeartbeat ?? 0) > backAt,
      10_000,
      () => "a heartbeat after the restart",
    );
    await waitFor(
      async () => (await get(o.apiUrl, "/api/v1/agent/ready")).status === 200,
      10_000,
      () => "ready again",
    );
    expect(await get(o.apiUrl, "/api/v1/agent/alive")).toMatchObject({ status: 200, body: { Status: "OK" } });

    expect(messages("transport down")).not.toHaveLength(0);
    expect(messages("transport back")).not.toHaveLength(0);
    expect((await storedStream(dataDir, "node-edge-1")).map((e) => e.type)).toEqual([
      "NodeRegistered",
      "NodeCredentialBound",
    ]);
    const node = await get(o.apiUrl, "/api/v1/orchestrator/nodes/edge-1");
    expect(node.body.Node).toMatchObject({ Health: "HEALTHY", Connection: "CONNECTED" });
  });

  it("still marks a node UNHEALTHY that stays silent a full DisconnectTimeout after NATS is back", async () => {
    const { logger, messages } = capturedLogger();
    const { o, pidFile, dataDir } = await orchestratorWithEmbeddedNats(logger);
    const agent = await attachAgent(o);
    process.kill(readPid(pidFile), "SIGKILL");
    await agent.stop(); // the node really goes away during the outage
    await waitFor(
      () => messages("orchestrator transport back").length > 0,
      15_000,
      () => "the transport to come back",
    );
    const backAt = messages("orchestrator transport back")[0]!.time as number;
    const unhealthy = async () =>
      (await storedStream(dataDir, "node-edge-1")).find((e) => e.type === "NodeBecameUnhealthy");
    await waitFor(
      async () => (await unhealthy()) !== undefined,
      10_000,
      () => "the silent node to become UNHEALTHY",
    );
    expect(Date.parse((await unhealthy())!.time) - backAt).toBeGreaterThanOrEqual(2_000);
  });
});

describe("readiness with an external NATS", () => {
  it("lists the connection and the store, no nats-server, and documents the route", async () => {
    const nats = await TestNatsServer.start();
    cleanups.push(() => nats.stop());
    const o = await startOrchestrator(orchestratorConfig(nats.url), silentLogger);
    cleanups.push(() => o.stop());
    const ready = await get(o.apiUrl, "/api/v1/agent/ready");
    expect(ready.status).toBe(200);
    expect(ready.body.Checks).toEqual([
      {
        Name: "nats",
        Status: "OK",
        Reason: expect.stringMatching(new RegExp(`^connected to ${nats.url} \\(round trip \\d+ms\\)$`)),
        Since: expect.any(String),
      },
      { Name: "jetstream", Status: "OK", Reason: "answering" },
      {
        Name: "store",
        Status: "OK",
        Reason: expect.stringMatching(/^SQLite store .*shoal\.db is readable and its last write succeeded$/),
      },
    ]);
    const doc = (await get(o.apiUrl, "/api/v1/openapi.json")).body;
    expect(doc.paths["/api/v1/agent/ready"].get.responses).toHaveProperty("503");
    expect(doc.components.schemas.Check.properties.Status.enum).toEqual(["OK", "FAILING"]);
  });
});

describe("bounded shutdown", () => {
  it("stops the orchestrator and a compute agent within the bound when the nats-server is wedged (SIGSTOP)", async () => {
    const { logger, messages } = capturedLogger();
    const { o, pidFile } = await orchestratorWithEmbeddedNats(logger);
    const agent = await attachAgent(o);
    const pid = readPid(pidFile);
    process.kill(pid, "SIGSTOP");

    // The socket stays open, so only a round trip tells: ready and alive fail, saying why.
    await waitFor(
      async () => (await get(o.apiUrl, "/api/v1/agent/ready")).status === 503,
      10_000,
      () => "ready to fail",
    );
    const ready = await get(o.apiUrl, "/api/v1/agent/ready");
    const nats = ready.body.Details.Checks.find((c: any) => c.Name === "nats");
    expect(nats).toMatchObject({
      Status: "FAILING",
      Reason: expect.stringMatching(/did not answer a ping within 2000ms|disconnected from/),
    });
    // Pings notice the wedge as an outage of the orchestrator's own transport.
    await waitFor(
      () => messages("orchestrator transport down").length > 0,
      10_000,
      () => "the wedge to count as an outage",
    );
    expect(messages("orchestrator transport down")[0]).toMatchObject({
      reason: expect.stringContaining("NATS connection to nats://127.0.0.1:"),
    });

    const started = Date.now();
    await agent.stop();
    await o.stop();
    const elapsed = Date.now() - started;
    // The agent's drain (2 s) and the orchestrator's NATS steps (2 s each: protocol, publisher, drain) at most.
    expect(elapsed).toBeLessThan(10_000);
    expect(processRunning(pid)).toBe(false);
    const timedOut = messages("closing hard").map((r) => r.step);
    expect(timedOut).toContain("stopping the compute protocol");
    expect(timedOut).toContain("draining the NATS connection");
  });
});
