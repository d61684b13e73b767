import { setTimeout as sleep } from "node:timers/promises";
import { connect, type NatsConnection } from "nats";
import { afterEach, describe, expect, it } from "vitest";
import { closeNatsConnection } from "../../src/transport/close-nats-connection.ts";
import { silentLogger } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";

/**
 * Closing a connection whose server has gone while it keeps reconnecting, as an agent's is when it
 * stops after its orchestrator: a drain cannot flush then, and nats.js resolves it anyway when a
 * reconnect attempt drops the pending flush, without closing. The connection must be closed all the
 * same, or its reconnect loop and ping timer keep the process alive.
 */
const open: NatsConnection[] = [];
afterEach(async () => {
  for (const nc of open.splice(0)) await nc.close().catch(() => undefined);
});

describe("closeNatsConnection", () => {
  it("closes a connection that is reconnecting to a server that is gone, with subscriptions and reconnect attempts meanwhile", async () => {
    const server = await TestNatsServer.start();
    const nc = await connect({
      servers: server.url,
      reconnect: true,
      maxReconnectAttempts: -1,
      // Attempts while the drain waits: each one drops the drain's pending flush.
      reconnectDelayHandler: () => 20,
    });
    open.push(nc);
    nc.subscribe("work.>", { callback: () => undefined });
    nc.subscribe("echo", { callback: (_err, msg) => msg.respond() });
    await nc.request("echo", undefined, { timeout: 2_000 });
    await server.stop();
    await sleep(200);
    expect(nc.isClosed()).toBe(false);

    await closeNatsConnection(nc, silentLogger);

    expect(nc.isClosed(), "connection closed once closeNatsConnection returns").toBe(true);
  });
});
