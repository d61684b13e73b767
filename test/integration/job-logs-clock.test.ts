import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { JobLogs } from "../../src/api/jobs/job-logs.ts";
import { ExecutionLogServer } from "../../src/compute/execution-log-server.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { JobViews } from "../../src/projections/jobs/job-views.ts";
import { encode } from "../../src/transport/codec.ts";
import { logBatchSubject, logReadSubject } from "../../src/transport/log-messages.ts";
import { NodeLogClient } from "../../src/transport/node-log-client.ts";
import { silentLogger } from "../support/fixtures.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { envelopeOf } from "../support/recorded-event.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * A read of an execution that is not on its node (yet, or any more) looks again after a pause, and
 * gives up without follow once the settle time has passed: both on the orchestrator's clock. The
 * node is a real log server over a real Docker executor, which does not run the execution.
 */
const nodeId = `logclk-${randomUUID().slice(0, 8)}`;
let nats: TestNatsServer;
let nodeNc: NatsConnection;
let orchestratorNc: NatsConnection;
let executor: DockerExecutor;
let server: ExecutionLogServer;
let client: NodeLogClient;

beforeAll(async () => {
  nats = await TestNatsServer.start();
  nodeNc = await connect({ servers: nats.url });
  orchestratorNc = await connect({ servers: nats.url });
  executor = new DockerExecutor({
    nodeId,
    capacity: { cpuMillis: 1000, memoryBytes: 256 * 1024 * 1024 },
    logger: silentLogger,
    docker: new Docker(),
    stopGraceSeconds: 0,
  });
  server = new ExecutionLogServer({
    nodeId,
    executor,
    send: (batch) => nodeNc.publish(logBatchSubject(nodeId), encode(batch)),
    logger: silentLogger,
  });
  nodeNc.subscribe(logReadSubject(nodeId), { callback: (_err, msg) => server.handle(msg.data) });
  await nodeNc.flush();
  client = new NodeLogClient(orchestratorNc, silentLogger);
  client.start();
});

afterAll(async () => {
  client?.stop();
  server?.stop();
  await executor?.close();
  await nodeNc?.close();
  await orchestratorNc?.close();
  await nats?.stop();
});

/** The read model with one execution placed on the node, not started there. */
function placed(executionId: string) {
  const views = new JobViews();
  views.handleEnvelope(
    envelopeOf(`execution-${executionId}`, {
      type: "ExecutionCreated",
      data: {
        ExecutionID: executionId,
        JobID: "j-1",
        Namespace: "default",
        NodeID: nodeId,
        JobType: "batch",
        JobVersion: 1,
        PartitionIndex: 0,
        DesiredState: "Pending",
        AllocatedResources: { CPU: 0.1, Memory: 1, Disk: 0, GPU: 0 },
        ExecutionTimeout: 0,
        TimeoutBuffer: 0,
        PreviousExecution: "",
      },
    }),
  );
  const clock = new ManualClock();
  const deadlines = new DeadlineScheduler(clock);
  const logs = new JobLogs(views, client, { clock, deadlines, retryMs: 500, settleMs: 2_000 });
  return { execution: views.execution(executionId)!, clock, deadlines, logs };
}

async function readAll(lines: AsyncGenerator<unknown>): Promise<unknown[]> {
  const got: unknown[] = [];
  for await (const line of lines) got.push(line);
  return got;
}

describe("job logs on the orchestrator's clock", () => {
  it("looks again after each pause of the clock, and without follow gives up once the settle time has passed", async () => {
    const { execution, clock, deadlines, logs } = placed("e-settle");
    let ended = false;
    const read = readAll(logs.lines(execution, { follow: false })).finally(() => (ended = true));
    for (let look = 0; look < 4; look++) {
      await waitFor(
        () => deadlines.has(`job-logs/e-settle/${look}`),
        10_000,
        () => `look ${look} waits out its pause on the clock`,
      );
      expect(deadlines.at(`job-logs/e-settle/${look}`)).toBe(clock.now() + 500);
      expect(ended).toBe(false);
      await clock.advance(500);
    }
    // 2 s of the clock since the first look: the fifth finds it still absent and gives up.
    expect(await read).toEqual([]);
    expect(deadlines.size).toBe(0);
  });

  it("ends a follow waiting out its pause when the logs stop, leaving nothing on the heap", async () => {
    const { execution, deadlines, logs } = placed("e-stop");
    const read = readAll(logs.lines(execution, { follow: true })).then(
      () => "ended",
      (e: Error) => e.message,
    );
    await waitFor(
      () => deadlines.has("job-logs/e-stop/0"),
      10_000,
      () => "the follow waits out its pause",
    );
    await logs.stop();
    expect(await read).toBe("the orchestrator is stopping: read the logs again once it is back");
    expect(deadlines.size).toBe(0);
  });
});
