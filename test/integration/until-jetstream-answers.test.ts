import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/actors/clock.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { untilJetStreamAnswers } from "../../src/transport/until-jetstream-answers.ts";
import { capturedLogger, type LogRecord } from "../support/captured-logger.ts";
import { TestNatsCluster } from "../support/nats-cluster.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * What a restarted orchestrator meets on a NATS cluster that is electing its JetStream leaders: requests that time out
 * or find nobody to answer. Two of the three servers are killed, so the last one has no quorum until they are back.
 */
let cluster: TestNatsCluster;
let conn: NatsConnection;
const deadlines = new DeadlineScheduler(systemClock);

beforeAll(async () => {
  cluster = await TestNatsCluster.start();
  conn = await connect({ servers: cluster.urls, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
}, 60_000);

afterAll(async () => {
  deadlines.stop();
  await conn?.close();
  await cluster?.stop();
});

const openBucket = (name: string) => () =>
  conn.jetstream({ timeout: 1_000 }).views.kv(name, { history: 1, replicas: 3, ttl: 10_000 });

const retries = (records: readonly LogRecord[]) => records.filter((r) => r.msg.startsWith("JetStream did not answer"));

describe("untilJetStreamAnswers", () => {
  it("throws a refusal at once, trying nothing again", async () => {
    const { logger, records } = capturedLogger();
    const jsm = await conn.jetstreamManager();
    await expect(
      untilJetStreamAnswers("reading a stream that is not there", () => jsm.streams.info("NOT_THERE"), {
        clock: systemClock,
        deadlines,
        logger,
      }),
    ).rejects.toThrow("stream not found");
    expect(retries(records)).toEqual([]);
  });

  it("waits out a cluster without a quorum, saying so each time, and opens the bucket once it is back", async () => {
    const { logger, records } = capturedLogger();
    cluster.kill("n2");
    cluster.kill("n3");
    let revived = false;
    try {
      const opening = untilJetStreamAnswers("opening the bucket B1", openBucket("B1"), {
        clock: systemClock,
        deadlines,
        logger,
      });
      await waitFor(
        () => retries(records).length >= 2,
        20_000,
        () => "two tries logged",
      );
      cluster.revive("n2");
      cluster.revive("n3");
      revived = true;
      const kv = await opening;
      // The bucket is there; its own stream may still be electing a leader for a moment, as after any restart.
      await waitFor(
        async () => (await kv.put("k", "v").catch(() => 0)) > 0,
        20_000,
        () => "a put to the bucket",
      );
      const logged = retries(records);
      expect(logged[0]).toMatchObject({ what: "opening the bucket B1", attempt: 1, pauseMs: 250 });
      expect(logged[1]).toMatchObject({ attempt: 2, pauseMs: 500 });
      expect(logged.every((r) => r.level === 40)).toBe(true);
    } finally {
      if (!revived) {
        cluster.revive("n2");
        cluster.revive("n3");
      }
    }
  }, 60_000);

  it("gives up after its patience with the last failure, having logged each try", async () => {
    await cluster.waitForJetStream();
    const { logger, records } = capturedLogger();
    cluster.kill("n2");
    cluster.kill("n3");
    try {
      const started = Date.now();
      const failure = await untilJetStreamAnswers("opening the bucket B2", openBucket("B2"), {
        clock: systemClock,
        deadlines,
        logger,
        patienceMs: 3_000,
      }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(Error);
      expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
      expect(retries(records).length).toBeGreaterThanOrEqual(2);
    } finally {
      cluster.revive("n2");
      cluster.revive("n3");
    }
  }, 60_000);
});
