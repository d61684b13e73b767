import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../machines/job/job-defaults.ts";
import { executionIdOf } from "../../machines/job/job-id.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobControl } from "../../src/actors/job-control.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { TestNatsServer } from "../support/nats-server.ts";

/**
 * Bacalhau's GET /jobs/{id}?include=… carries every execution and history entry, and its WebUI's
 * detail page shows exactly what comes (the Executions tab and its count do not page). A job
 * with more than a page (100) of executions, written to the orchestrator's own SQLite file
 * through the job actors, then served by a real orchestrator over HTTP.
 */
const EXECUTIONS = 130;
let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let jobId = "";

beforeAll(async () => {
  const dataDir = tempDir("shoal-include-");
  const clock = new ManualClock();
  const store = new SqliteEventStore(join(dataDir, "shoal.db"));
  const deadlines = new DeadlineScheduler(clock);
  const control = new JobControl({ store, clock, logger: silentLogger, deadlines, defaults: BACALHAU_JOB_DEFAULTS });
  const operator = commandContext({ type: "operator", id: "test" });
  jobId = (
    await control.submit(
      { Type: "ops", Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1" } } }] },
      operator,
    )
  ).jobId;
  for (let n = 0; n < EXECUTIONS; n++) {
    const command = {
      type: "Create",
      jobId,
      namespace: "default",
      nodeId: `n-${n}`,
      jobType: "ops",
      jobVersion: 1,
      partitionIndex: 0,
      resources: { CPU: 0.1, Memory: 1, Disk: 0, GPU: 0 },
      executionTimeout: 0,
      timeoutBuffer: 0,
    } as const;
    await control.executions.execute(executionIdOf(randomUUID()), command, operator);
  }
  await control.close();
  deadlines.stop();
  await store.close();
  nats = await TestNatsServer.start();
  orchestrator = await startOrchestrator(orchestratorConfig(nats.url, { DataDir: dataDir }), silentLogger);
});

afterAll(async () => {
  await orchestrator?.stop();
  await nats?.stop();
});

const get = async (path: string) => {
  const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/jobs/${jobId}${path}`);
  expect(res.status, path).toBe(200);
  return (await res.json()) as Record<string, any>;
};

describe("GET /jobs/{id}?include=executions,history", () => {
  it("includes every execution and history entry, as Bacalhau does, not a first page", async () => {
    const { Executions, History } = await get("?include=executions,history");
    const executions = await get("/executions?limit=1000");
    const history = await get("/history?limit=1000");
    expect(executions.Items.length).toBeGreaterThanOrEqual(EXECUTIONS);
    expect(history.Items.length).toBeGreaterThan(EXECUTIONS);
    expect(Executions).toEqual({ Items: executions.Items, NextToken: "" });
    expect(History).toEqual({ Items: history.Items, NextToken: "" });
  });

  it("still takes a limit, the rest behind NextToken", async () => {
    const { Executions } = await get("?include=executions&limit=5");
    expect(Executions.Items).toHaveLength(5);
    expect(Executions.NextToken).toBe("5");
  });
});
