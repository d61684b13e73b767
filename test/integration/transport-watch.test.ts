import { rmSync } from "node:fs";
import { connect } from "nats";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/actors/clock.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { TransportWatch } from "../../src/orchestrator/transport-watch.ts";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { waitFor } from "../support/shoal-process.ts";
import { freePort } from "../support/nats-server.ts";

const WARN = 40;
const ERROR = 50;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function timing(): { clock: typeof systemClock; deadlines: DeadlineScheduler } {
  const deadlines = new DeadlineScheduler(systemClock);
  cleanups.push(() => deadlines.stop());
  return { clock: systemClock, deadlines };
}

async function natsAt(port: number, dir: string): Promise<EmbeddedNatsServer> {
  return EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger });
}

describe("the orchestrator's transport watch", () => {
  it("warns when NATS goes away, escalates to an error only while it stays away, and says when it is back", async () => {
    const dir = tempDir("shoal-transport-watch-");
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    let server = await natsAt(port, dir);
    cleanups.push(() => server.stop());
    const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    cleanups.push(() => nc.close());
    const { logger, messages } = capturedLogger();
    const watch = new TransportWatch(nc, server.url, undefined, logger, { ...timing(), escalateAfterMs: 500 });
    cleanups.push(() => watch.stop());
    watch.start();

    await server.stop();
    await waitFor(
      () => messages("orchestrator transport down").length > 0,
      10_000,
      () => "the disconnect",
    );
    expect(messages("orchestrator transport down")[0]!.level).toBe(WARN);
    await waitFor(
      () => messages("orchestrator transport still down").length > 0,
      10_000,
      () => "the escalation",
    );
    expect(messages("orchestrator transport still down")[0]).toMatchObject({
      level: ERROR,
      reason: expect.stringContaining("lost; reconnecting"),
    });

    server = await natsAt(port, dir);
    await waitFor(
      () => messages("orchestrator transport back").length > 0,
      10_000,
      () => "the reconnect",
    );
    expect(messages("orchestrator transport back")[0]!.downForMs).toBeGreaterThanOrEqual(500);
    expect(watch.down).toBeUndefined();
  });

  it("logs no error for an outage shorter than the escalation (a NATS server restart in a cluster)", async () => {
    const dir = tempDir("shoal-transport-watch-");
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    let server = await natsAt(port, dir);
    cleanups.push(() => server.stop());
    const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
    cleanups.push(() => nc.close());
    const { logger, messages, records } = capturedLogger();
    const watch = new TransportWatch(nc, server.url, undefined, logger, { ...timing(), escalateAfterMs: 5_000 });
    cleanups.push(() => watch.stop());
    watch.start();

    await server.stop();
    server = await natsAt(port, dir);
    await waitFor(
      () => messages("orchestrator transport back").length > 0,
      10_000,
      () => "the reconnect",
    );
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    expect(records.filter((r) => r.level >= ERROR)).toEqual([]);
  });
});
