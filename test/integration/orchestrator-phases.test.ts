import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { PHASES } from "../../src/orchestrator/module.ts";
import { StartupError } from "../../src/orchestrator/services.ts";
import { jobViewsSnapshotPath } from "../../src/snapshots/job-views-snapshot.ts";
import { type LogRecord, capturedLogger } from "../support/captured-logger.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { TestNatsServer } from "../support/nats-server.ts";

let nats: TestNatsServer;
const running: RunningOrchestrator[] = [];

beforeAll(async () => {
  nats = await TestNatsServer.start();
});

afterAll(async () => {
  for (const o of running) await o.stop();
  await nats.stop();
});

const indexOf = (records: readonly LogRecord[], msg: string, phase?: string) =>
  records.findIndex((r) => r.msg === msg && (phase === undefined || r.phase === phase));

describe("the orchestrator's start-up phases", () => {
  it("runs open, recover, follow, catch up, arm, listen and serve in order, each logged with its time", async () => {
    const { logger, records } = capturedLogger();
    const orchestrator = await startOrchestrator(orchestratorConfig(nats.url), logger);
    running.push(orchestrator);
    const done = records.filter((r) => r.msg === "start-up phase done");
    expect(done.map((r) => r.phase)).toEqual([...PHASES]);
    for (const r of done) expect(r.ms).toBeGreaterThanOrEqual(0);
    // Where each module's work lands: the read models catch up in their phase, deadlines are armed before anything
    // listens, and the orchestrator is ready only once the API serves.
    const nodesCaughtUp = indexOf(records, "read model caught up; node list indexed");
    expect(nodesCaughtUp).toBeGreaterThan(indexOf(records, "start-up phase starting", "catch up"));
    expect(nodesCaughtUp).toBeLessThan(indexOf(records, "start-up phase done", "catch up"));
    const jobsCaughtUp = indexOf(records, "recovered jobs from the event store");
    expect(jobsCaughtUp).toBeGreaterThan(nodesCaughtUp);
    expect(jobsCaughtUp).toBeLessThan(indexOf(records, "start-up phase done", "catch up"));
    const jobsArmed = indexOf(records, "jobs read model caught up; their deadlines are armed");
    expect(jobsArmed).toBeGreaterThan(indexOf(records, "start-up phase starting", "arm"));
    expect(jobsArmed).toBeLessThan(indexOf(records, "start-up phase starting", "listen"));
    expect(indexOf(records, "orchestrator ready")).toBeGreaterThan(indexOf(records, "start-up phase done", "serve"));
  });

  it("stops last started first: the API before the nodes' messages, the snapshots after the processors", async () => {
    const { logger, records } = capturedLogger();
    const orchestrator = await startOrchestrator(orchestratorConfig(nats.url), logger);
    await orchestrator.stop();
    expect(records.filter((r) => r.msg === "stop step").map((r) => r.step)).toEqual([
      // Each event stream client is told where to resume before the API waits for its connections.
      "ending the event streams",
      "ending the job log streams",
      "closing the API",
      // No request left that could forward a write; one forwarded now finds nobody and is told to try again.
      "no longer answering forwarded writes",
      "stopping the job log reads",
      "stopping the JetStream watch",
      "stopping the execution reports",
      // Its own node says it stopped, while the processors still run to publish, sign and snapshot that.
      "marking this orchestrator's node stopped",
      "stopping the compute protocol",
      "stopping the queue backoff",
      "stopping the node-work checks",
      // While the store and NATS are open: what was stored up to the stop is signed and published.
      "signing the last audit checkpoint",
      "stopping the event processors",
      // The read models' final state: nothing folds any more.
      "writing the job-views snapshot",
      "writing the node-state snapshot",
      "stopping the node reactions",
      "stopping the job runner's resends",
      "stopping the work messages' resends",
      "stopping the job actors",
      "stopping the node manager",
      "stopping the transport watch",
      "unwatching store commits",
      "closing NATS and the store",
      // Last of all: another orchestrator may take the DataDir only once this one let go of it.
      "releasing the DataDir lock",
    ]);
  });

  it("a phase that fails stops start-up, stops what started and frees the DataDir", async () => {
    const first = await startOrchestrator(orchestratorConfig(nats.url), silentLogger);
    running.push(first);
    const port = Number(new URL(first.apiUrl).port);
    const { logger, records } = capturedLogger();
    const config = orchestratorConfig(nats.url, { "API.Port": port });
    const refused = await startOrchestrator(config, logger).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StartupError);
    expect((refused as Error).message).toBe(
      `API.Port ${port} is already in use; choose another with -c API.Port=<port>`,
    );
    expect(records.filter((r) => r.msg === "start-up phase failed").map((r) => r.phase)).toEqual(["serve"]);
    expect(records.filter((r) => r.msg === "start-up phase done").map((r) => r.phase)).toEqual(
      PHASES.filter((p) => p !== "serve"),
    );
    // Its stop steps ran: the read model's snapshot was written (after its processors stopped), the DataDir let go.
    expect(existsSync(jobViewsSnapshotPath(config.DataDir))).toBe(true);
    const again = await startOrchestrator({ ...config, "API.Port": 0 }, silentLogger);
    running.push(again);
    expect(again.nodeId).toBe("node-0");
  });
});
