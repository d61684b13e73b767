import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import { jobOrderKey } from "../../src/orchestrator/modules/job-flow-module.ts";
import { EventEnvelope } from "../../src/projections/event-envelope.ts";
import { JobViews } from "../../src/projections/jobs/job-views.ts";
import { APPROVAL, DISPATCH, PLACEMENT, jobFlow } from "../../src/workflows/jobs/job-flow.ts";
import type { IssuedCommand } from "../../src/workflows/workflow.ts";
import { WorkflowHost } from "../../src/workflows/workflow-host.ts";
import { exampleEvent } from "../support/example-events.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { recordedEvent } from "../support/recorded-event.ts";
import { waitFor } from "../support/shoal-process.ts";
import { cordonedInput, cordonedInputs, thingsWorkflow } from "../support/things-workflow.ts";

/**
 * The workflow host runs a batch's inputs in order per order key (by default the input's stream) and, with a
 * concurrency above 1, different keys at the same time, at most that many at once. A real SQLite file store; the
 * batches are handed to `handle` as the processor host's lane hands them.
 */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const things = thingsWorkflow();
const input = cordonedInput;
const inputs = cordonedInputs;

function openStore(file = join(tempDir("shoal-workflow-concurrency-"), "shoal.db")) {
  const store = new SqliteEventStore(file);
  cleanups.push(() => store.close());
  return { store, file };
}

/** A promise the test resolves. */
function held(): { promise: Promise<void>; release: () => void } {
  let release = () => {};
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

/**
 * A handler that logs `start <name>` and `end <name>` of each command (its input's id unless `name` says otherwise);
 * those `holds` picks end only once `until` has resolved.
 */
function logging(
  log: string[],
  until: Promise<void>,
  holds: (c: IssuedCommand) => boolean,
  name = (c: IssuedCommand) => c.causationId,
): (c: IssuedCommand) => Promise<void> {
  return async (c) => {
    log.push(`start ${name(c)}`);
    if (holds(c)) await until;
    log.push(`end ${name(c)}`);
  };
}

const stepInputs = async (store: SqliteEventStore) =>
  (await store.readStream("workflow-things")).map((e) => (e.data as { Input: { EventID: string } }).Input.EventID);

describe("the workflow host's order and concurrency", () => {
  it("runs other keys while one key's input is blocked, and a key's inputs strictly in batch order", async () => {
    const { store } = openStore();
    const log: string[] = [];
    const a1 = held();
    const handler = logging(log, a1.promise, (c) => c.causationId === "a1");
    const host = new WorkflowHost(things, {
      store,
      handlers: { thing: handler },
      logger: silentLogger,
      concurrency: 4,
    });
    const handled = host.handle(inputs("a1", "b1", "a2", "b2"));
    let settled = false;
    void handled.then(
      () => (settled = true),
      () => (settled = true),
    );

    await waitFor(
      () => log.includes("end b2"),
      10_000,
      () => `b's inputs done while a1 is held: ${log.join(", ")}`,
    );
    expect(log).not.toContain("end a1");
    expect(log).not.toContain("start a2");
    expect(settled).toBe(false);
    a1.release();
    await handled;
    expect(log.indexOf("start a2")).toBeGreaterThan(log.indexOf("end a1"));
    expect(log.indexOf("start b2")).toBeGreaterThan(log.indexOf("end b1"));
    expect((await stepInputs(store)).sort()).toEqual(["a1", "a2", "b1", "b2"]);
  });

  it("by default runs one input after another: b waits behind a", async () => {
    const { store } = openStore();
    const log: string[] = [];
    const a1 = held();
    const handler = logging(log, a1.promise, (c) => c.causationId === "a1");
    const host = new WorkflowHost(things, { store, handlers: { thing: handler }, logger: silentLogger });
    const handled = host.handle(inputs("a1", "b1", "a2", "b2"));
    await waitFor(
      () => log.includes("start a1"),
      10_000,
      () => log.join(", "),
    );
    a1.release();
    await handled;
    expect(log).toEqual(["start a1", "end a1", "start b1", "end b1", "start a2", "end a2", "start b2", "end b2"]);
    expect(await stepInputs(store)).toEqual(["a1", "b1", "a2", "b2"]);
  });

  it("never has more groups in flight than its concurrency", async () => {
    const { store } = openStore();
    const waiting: (() => void)[] = [];
    let running = 0;
    let most = 0;
    const handler = async () => {
      running++;
      most = Math.max(most, running);
      const h = held();
      waiting.push(h.release);
      await h.promise;
      running--;
    };
    const host = new WorkflowHost(things, {
      store,
      handlers: { thing: handler },
      logger: silentLogger,
      concurrency: 2,
    });
    const handled = host.handle(inputs("a1", "b1", "c1", "d1", "e1"));
    for (let released = 0; released < 5; released++) {
      const expected = Math.min(2, 5 - released);
      await waitFor(
        () => waiting.length === expected,
        10_000,
        () => `${waiting.length} handlers held`,
      );
      // A third group would have stored its step record by now.
      await sleep(50);
      expect(waiting).toHaveLength(expected);
      expect(await stepInputs(store)).toHaveLength(released + expected);
      waiting.shift()?.();
    }
    await handled;
    expect(most).toBe(2);
    expect((await stepInputs(store)).sort()).toEqual(["a1", "b1", "c1", "d1", "e1"]);
  });

  it("rejects on a passing failure once the other groups settle; a replay cut elsewhere does each once", async () => {
    const { store, file } = openStore();
    const made = async (s: SqliteEventStore, c: IssuedCommand) => {
      // What a handler creates carries the command's id: a second delivery is the same append.
      const event = { id: c.commandId, type: "ThingMade", data: { By: c.causationId }, metadata: { time: "t" } };
      await s.append(`thing-${c.entityId}`, [event], "any");
    };
    const done: string[] = [];
    let c1Failed = false;
    const failing = async (c: IssuedCommand) => {
      if (c.causationId === "c1" && !c1Failed) {
        // The other groups are still running when this one fails (b1 waits for it): handle waits for them.
        await waitFor(
          () => done.includes("a2") && done.includes("d1"),
          10_000,
          () => done.join(", "),
        );
        c1Failed = true;
        throw new StoreUnavailableError({ reason: "disk full" });
      }
      if (c.causationId === "b1")
        await waitFor(
          () => c1Failed,
          10_000,
          () => "c1 failed",
        );
      await made(store, c);
      done.push(c.causationId);
    };
    const batch = inputs("a1", "b1", "c1", "a2", "c2", "d1");
    const first = new WorkflowHost(things, {
      store,
      handlers: { thing: failing },
      logger: silentLogger,
      concurrency: 4,
    });
    await expect(first.handle(batch)).rejects.toThrow(StoreUnavailableError);
    // Settled before the rejection: b1 finished after c1 failed. c2 waits behind c1, which did not finish.
    expect(done.sort()).toEqual(["a1", "a2", "b1", "d1"]);
    expect((await stepInputs(store)).sort()).toEqual(["a1", "a2", "b1", "c1", "d1"]);
    await store.close();

    // After a restart the lane's batches are cut elsewhere: each step's append is acknowledged again on its own.
    const again = new SqliteEventStore(file);
    cleanups.push(() => again.close());
    const redone: string[] = [];
    const handler = async (c: IssuedCommand) => {
      await made(again, c);
      redone.push(c.causationId);
    };
    const second = new WorkflowHost(things, {
      store: again,
      handlers: { thing: handler },
      logger: silentLogger,
      concurrency: 4,
    });
    for (const part of [batch.slice(0, 1), batch.slice(1, 4), batch.slice(4)]) await second.handle(part);
    expect(redone.sort()).toEqual(["a1", "a2", "b1", "c1", "c2", "d1"]);

    const steps = await again.readStream("workflow-things");
    expect(steps.map((e) => (e.data as { Input: { EventID: string } }).Input.EventID).sort()).toEqual([
      "a1",
      "a2",
      "b1",
      "c1",
      "c2",
      "d1",
    ]);
    expect(new Set(steps.map((e) => e.id)).size).toBe(6);
    for (const [thing, by] of [
      ["a", ["a1", "a2"]],
      ["b", ["b1"]],
      ["c", ["c1", "c2"]],
      ["d", ["d1"]],
    ] as const) {
      const stored = await again.readStream(`thing-${thing}`);
      expect(stored.map((e) => (e.data as { By: string }).By)).toEqual(by);
    }
  });

  it("starts no further group once one has failed", async () => {
    const { store } = openStore();
    const ran: string[] = [];
    let a1Failed = false;
    const handler = async (c: IssuedCommand) => {
      ran.push(c.causationId);
      if (c.causationId === "a1") {
        a1Failed = true;
        throw new StoreUnavailableError({ reason: "disk full" });
      }
      await waitFor(
        () => a1Failed,
        10_000,
        () => "a1 failed",
      );
    };
    const host = new WorkflowHost(things, {
      store,
      handlers: { thing: handler },
      logger: silentLogger,
      concurrency: 2,
    });
    await expect(host.handle(inputs("a1", "b1", "c1"))).rejects.toThrow(StoreUnavailableError);
    expect(ran.sort()).toEqual(["a1", "b1"]);
    expect((await stepInputs(store)).sort()).toEqual(["a1", "b1"]);
  });

  it("keeps a stream's inputs in order when its key changes in a batch (job flow, read model behind)", async () => {
    const { store } = openStore();
    const log: string[] = [];
    const created = held();
    const handler = logging(
      log,
      created.promise,
      (c) => c.type === "AskForBid",
      (c) => `${c.type} ${c.entityId}`,
    );
    // The job read model has not folded e-1's ExecutionCreated: its bid's key alone would be its stream.
    const views = new JobViews();
    const handlers = { [PLACEMENT]: handler, [DISPATCH]: handler, [APPROVAL]: handler };
    const orderKey = jobOrderKey(views);
    const host = new WorkflowHost(jobFlow, { store, handlers, logger: silentLogger, concurrency: 4, orderKey });
    const batch = [
      new EventEnvelope(recordedEvent("execution-e-1", exampleEvent("ExecutionCreated", "e-1", { JobID: "j-1" }), 1)),
      new EventEnvelope(recordedEvent("job-j-2", exampleEvent("JobSubmitted", "j-2"), 2)),
      new EventEnvelope(recordedEvent("execution-e-1", exampleEvent("ExecutionBidAccepted", "e-1"), 3)),
    ];
    const handled = host.handle(batch);
    await waitFor(
      () => log.includes("end PlaceJob j-2"),
      10_000,
      () => log.join(", "),
    );
    expect(log).not.toContain("start ApproveBids e-1");
    created.release();
    await handled;
    expect(log.indexOf("start ApproveBids e-1")).toBeGreaterThan(log.indexOf("end AskForBid e-1"));
  });

  it("refuses a concurrency that is not a whole number of at least 1, naming it", () => {
    const { store } = openStore();
    for (const concurrency of [0, 1.5, -2])
      expect(() => new WorkflowHost(things, { store, handlers: {}, logger: silentLogger, concurrency })).toThrow(
        /concurrency of workflow things must be a whole number of at least 1/,
      );
  });

  for (const concurrency of [1, 4]) {
    it(`delivered again after a passing failure, repeats only the steps that did not finish (concurrency ${concurrency})`, async () => {
      const { store } = openStore();
      const done: string[] = [];
      const ended: string[] = [];
      let unavailable = 2;
      const handler = (c: IssuedCommand) => {
        if (c.causationId === "b1") throw new Error("this thing's data cannot be sent");
        if (c.causationId === "c1" && unavailable-- > 0) throw new StoreUnavailableError({ reason: "disk full" });
        done.push(c.causationId);
      };
      const host = new WorkflowHost(things, {
        store,
        handlers: { thing: handler },
        logger: silentLogger,
        endEntity: async (c) => void ended.push(c.causationId),
        concurrency,
      });
      const batch = inputs("a1", "b1", "c1", "d1");
      await expect(host.handle(batch)).rejects.toThrow(StoreUnavailableError);
      await expect(host.handle(batch)).rejects.toThrow(StoreUnavailableError);
      // The lane cuts its next delivery elsewhere: the same inputs and the one after them.
      await host.handle([...batch, input("e1", 5)]);
      expect(done.sort()).toEqual(["a1", "c1", "d1", "e1"]);
      expect(ended).toEqual(["b1"]);
      // Once a batch ended well, its inputs are forgotten: a later delivery of one is a step again (idempotent).
      await host.handle([input("a1", 1)]);
      expect(done.filter((d) => d === "a1")).toHaveLength(2);
    });
  }
});
