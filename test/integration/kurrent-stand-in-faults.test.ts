import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { StartupError } from "../../src/errors/startup-error.ts";
import { asShoalError } from "../../src/errors/shoal-error.ts";
import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import { MIN_SERVER_VERSION } from "../../src/events/eventstoredb/kurrent-server-version.ts";
import type { NewEvent, RecordedEvent } from "../../src/events/store/event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import type { EventEnvelope } from "../../src/projections/event-envelope.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { computeInfo, silentLogger } from "../support/fixtures.ts";
import { type ElectionRefusal, KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";
import { StandInLog } from "../support/kurrent-stand-in/stand-in-log.ts";
import { startStore } from "../support/kurrent-stand-in/store-start-up.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { nodeActor } from "../support/node-actor.ts";
import { waitFor } from "../support/shoal-process.ts";

const ctx = commandContext({ type: "operator", id: "alice" });
const register = (nodeId: string) => ({ type: "Register" as const, info: computeInfo(nodeId), manualApproval: true });
const ev = (type: string): NewEvent => ({
  id: randomUUID(),
  type,
  data: {},
  metadata: { time: "2026-01-01T00:00:00Z" },
});

const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close();
});

async function standIn(options?: Parameters<typeof KurrentStandIn.start>[0]): Promise<KurrentStandIn> {
  const s = await KurrentStandIn.start(options);
  closing.push(s);
  return s;
}

async function open(s: KurrentStandIn): Promise<EsdbEventStore> {
  const store = await EsdbEventStore.open(s.url);
  closing.push(store);
  return store;
}

/** A node's actor on a store connected to a new stand-in, on a manual clock. */
async function actorOnStandIn(id: string) {
  const s = await standIn();
  const clock = new ManualClock();
  return { s, clock, actor: nodeActor(id, await open(s), clock) };
}

/** What the promise rejected with; undefined when it resolved. */
const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

const ELECTION: readonly ElectionRefusal[] = [
  "Server Is Not Ready",
  "Server Is Busy",
  "No leader info available in response",
];

describe("KurrentDB: the server's version", () => {
  it(`refuses a server before ${MIN_SERVER_VERSION} or one with no version, naming the minimum`, async () => {
    for (const version of ["21.10.9", "22.6.0", undefined]) {
      const s = await standIn({ version });
      const refused = await failure(EsdbEventStore.open(s.url));
      expect(refused, String(version)).toBeInstanceOf(StartupError);
      expect((refused as Error).message).toContain(`KurrentDB ${MIN_SERVER_VERSION} or later is required`);
      expect((refused as Error).message).toContain(version ?? "does not report its version");
      expect(s.appendAttempts, "nothing written to a refused server").toEqual([]);
    }
  });

  it("accepts 22.10 and every later server", async () => {
    for (const version of ["22.10.0", "23.10.7", "24.10.4", "25.1.0", "26.0.0-rc.1"]) {
      const store = await open(await standIn({ version }));
      await store.checkWritable();
    }
  });
});

describe("KurrentDB: the orchestrator's store at start-up", () => {
  it("uses a supported server, and stops with the minimum version named on an older one", async () => {
    expect(await startStore((await standIn()).url)).toBe(0);
    await expect(startStore((await standIn({ version: "21.10.9" })).url)).rejects.toThrow(
      `cannot use KurrentDB: KurrentDB ${MIN_SERVER_VERSION} or later is required; ` +
        "EventStore.URL points at server 21.10.9. Upgrade the server",
    );
  });
});

describe("KurrentDB: appends refused during a leader election", () => {
  it("are the store's Unavailable (503, Retry-After), not an internal error, for each answer", async () => {
    const s = await standIn();
    const store = await open(s);
    for (const reason of ELECTION) {
      s.refuseAppends(reason, 1);
      const refused = await failure(store.append(`node-${randomUUID()}`, [ev("NodeRegistered")], "no_stream"));
      expect(refused, reason).toBeInstanceOf(StoreUnavailableError);
      expect(asShoalError(refused)).toMatchObject({ kind: "Unavailable", retryAfterSeconds: 5 });
      expect((refused as Error).message).toContain(reason);
    }
  });

  it("are re-appended by the actor with the same ids and expected revision, and stored once", async () => {
    const { s, clock, actor } = await actorOnStandIn("n1");
    s.refuseAppends("Server Is Not Ready", 2);
    const result = await clock.drive(actor.execute(register("n1"), ctx));
    expect(result.events.map((e) => e.type)).toEqual(["NodeRegistered"]);
    const attempts = s.appendAttempts.filter((a) => a.stream === "node-n1");
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(attempts[0]!.expected).toBe("no_stream");
    expect(s.log.stream("node-n1")!.map((e) => e.id)).toEqual(attempts[0]!.ids);
    expect(result.position).toBe(Number(s.log.stream("node-n1")![0]!.position));
  });

  it("answer 503 with Retry-After when the election outlasts the actor's retries, and store nothing", async () => {
    const { s, clock, actor } = await actorOnStandIn("n2");
    s.refuseAppends("Server Is Busy", 100);
    const failed = await failure(clock.drive(actor.execute(register("n2"), ctx)));
    expect(asShoalError(failed)).toMatchObject({ kind: "Unavailable", retryAfterSeconds: 5 });
    expect(s.log.stream("node-n2")).toBeUndefined();
    s.refuseAppends("Server Is Busy", 0);
    await clock.drive(actor.execute(register("n2"), ctx));
    expect(s.log.stream("node-n2")).toHaveLength(1);
  });
});

describe("KurrentDB: a node that is not the leader", () => {
  it("answers with the leader's address: Unavailable once, then the client writes and reads there", async () => {
    const log = new StandInLog();
    const leader = await standIn({ log, version: "24.10.4" });
    const follower = await standIn({ log, version: "24.10.4", leader: leader.address });
    const store = await open(follower);
    const stream = `node-${randomUUID()}`;
    const batch = [ev("NodeRegistered")];
    const refused = await failure(store.append(stream, batch, "no_stream"));
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect(log.stream(stream)).toBeUndefined();
    // The client reconnects to the leader it was told about: the same append succeeds there.
    const ok = await store.append(stream, batch, "no_stream");
    expect(ok.nextExpectedRevision).toBe(0);
    expect(leader.appendAttempts.map((a) => a.stream)).toContain(stream);
    // Its reads (another connection, the client's native one) learn of the leader the same way.
    await expect(store.readStream(stream)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect((await store.readStream(stream)).map((e) => e.id)).toEqual([batch[0]!.id]);
  });
});

describe("KurrentDB: subscriptions the server ends", () => {
  for (const how of ["ends cleanly", "drops"] as const) {
    it(`a subscription the server ${how} settles done with the store's Unavailable, not as if stopped`, async () => {
      const s = await standIn();
      const store = await open(s);
      const sub = store.subscribeToAll({}, () => undefined);
      await waitFor(() => s.openSubscriptions === 1, 10_000);
      expect(how === "ends cleanly" ? s.endSubscriptions() : s.dropSubscriptions()).toBe(1);
      await expect(sub.done).rejects.toBeInstanceOf(StoreUnavailableError);
      await sub.stop();
    });
  }

  it("a processor host resubscribes after the server ends its subscription cleanly, and misses nothing", async () => {
    const s = await standIn();
    const store = await open(s);
    const seen: RecordedEvent["position"][] = [];
    const host = new ProcessorHost({ store, logger: silentLogger, resubscribeDelayMs: 10 });
    host.add({
      name: "recorder",
      handle: (batch: readonly EventEnvelope[]) => void seen.push(...batch.map((e) => e.position)),
    });
    await host.start();
    closing.push({ close: () => host.stop() });
    const stream = `tick-${randomUUID()}`;
    const first = await store.append(stream, [ev("Ticked")], "no_stream");
    await waitFor(() => seen.includes(first.position), 10_000);
    expect(s.endSubscriptions()).toBe(1);
    const second = await store.append(stream, [ev("Ticked")], 0);
    await waitFor(() => seen.includes(second.position), 10_000);
    expect(seen).toEqual([first.position, second.position]);
    expect(s.openSubscriptions).toBe(1);
  });
});

describe("KurrentDB: bookkeeping streams stay bounded", () => {
  it("writes the probe stream's max-count metadata once across starts, and keeps one probe event", async () => {
    const s = await standIn();
    for (let start = 0; start < 3; start++) {
      const store = await EsdbEventStore.open(s.url);
      await store.checkWritable();
      await store.save("publisher", 10 + start);
      await store.close();
    }
    expect(s.log.stream("$$shoal-checkpoint-writable-check")).toHaveLength(1);
    expect(s.log.stream("$$shoal-checkpoint-publisher")).toHaveLength(1);
    expect(s.log.stream("shoal-checkpoint-writable-check")).toHaveLength(1);
    expect(s.log.stream("shoal-checkpoint-publisher")).toHaveLength(1);
  });
});
