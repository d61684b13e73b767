import { afterAll, expect, it } from "vitest";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { orchestratorConfig } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const PASSWORD = "pw-hunter2-do-not-show";

async function get(apiUrl: string, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${apiUrl}${path}`); // anonymously, as anyone may by default
  return { status: res.status, text: await res.text() };
}

it("never shows the password of the configured NATS URL on ready, alive or in the log, up or down", async () => {
  const nats = await TestNatsServer.start(); // takes any credentials
  let natsStopped = false;
  cleanups.push(() => (natsStopped ? Promise.resolve() : nats.stop()));
  const withCredentials = nats.url.replace("nats://", `nats://shoal:${PASSWORD}@`);
  expect(withCredentials).toContain(PASSWORD);
  const { logger, records } = capturedLogger();
  const orchestrator = await startOrchestrator(orchestratorConfig(withCredentials), logger);
  cleanups.push(() => orchestrator.stop());

  const up = await get(orchestrator.apiUrl, "/api/v1/agent/ready");
  expect(up.status).toBe(200);
  expect(up.text).toContain(`connected to ${nats.url} (round trip`);
  expect(up.text).not.toContain(PASSWORD);

  await nats.stop();
  natsStopped = true;
  await waitFor(
    async () => (await get(orchestrator.apiUrl, "/api/v1/agent/ready")).status === 503,
    10_000,
    () => "ready to fail",
  );
  const down = await get(orchestrator.apiUrl, "/api/v1/agent/ready");
  expect(down.text).toContain(`disconnected from ${nats.url}`);
  expect(down.text).not.toContain(PASSWORD);
  const alive = await get(orchestrator.apiUrl, "/api/v1/agent/alive");
  expect(alive.status).toBe(503);
  expect(alive.text).toContain(nats.url);
  expect(alive.text).not.toContain(PASSWORD);

  expect(records.some((r) => JSON.stringify(r).includes(nats.url))).toBe(true);
  expect(records.filter((r) => JSON.stringify(r).includes(PASSWORD))).toEqual([]);
}, 60_000);
