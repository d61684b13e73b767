import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import type { IssuedCommand, Workflow } from "../../src/workflows/workflow.ts";
import { WorkflowHost } from "../../src/workflows/workflow-host.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * A workflow step that fails for its entity's data ends that entity and the workflow goes on; one
 * that fails for a passing reason (the store unavailable) is tried again. A real SQLite store and
 * processor host; the workflow reacts to a node cordoned (`NodeCordoned` in `node-<id>`).
 */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const things: Workflow = {
  name: "things",
  react: ({ event, entityId }) => {
    if (event.type !== "NodeCordoned") return [];
    return [{ handler: "thing", entityId, type: "DoThing", reason: "a thing happened" }];
  },
};

async function happen(store: SqliteEventStore, id: string): Promise<void> {
  const actor = { type: "system" as const, id: "test" };
  const metadata = { time: new Date().toISOString(), actor, correlationId: id, causationId: id };
  const cordoned = { type: "NodeCordoned" as const, data: { NodeID: id, Reason: "a thing happened", By: actor } };
  await store.append(`node-${id}`, [encodeNodeEvent(cordoned, metadata, randomUUID())], "any");
}

describe("a workflow step that fails", () => {
  it("for its entity's data ends that entity with the reason and goes on; a passing one is tried again", async () => {
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    cleanups.push(() => store.close());
    const done: string[] = [];
    const ended: { entityId: string; reason: string }[] = [];
    let unavailable = 2;
    const handler = (c: IssuedCommand) => {
      if (c.entityId === "bad") throw new Error("this thing's data cannot be sent");
      if (c.entityId === "flaky" && unavailable-- > 0) throw new StoreUnavailableError({ reason: "disk full" });
      done.push(c.entityId);
    };
    const endEntity = async (c: IssuedCommand, reason: string) => {
      ended.push({ entityId: c.entityId, reason });
    };
    const host = new ProcessorHost({ store, logger: silentLogger, retryDelayMs: 10 });
    host.add(new WorkflowHost(things, { store, handlers: { thing: handler }, logger: silentLogger, endEntity }));
    await host.start();
    cleanups.push(() => host.stop());

    for (const id of ["first", "bad", "flaky", "after"]) await happen(store, id);
    const what = () => `the step after the bad one: ${JSON.stringify({ done, ended })}`;
    await waitFor(() => done.includes("after"), 10_000, what);
    expect(done).toEqual(["first", "flaky", "after"]);
    const reason = "the orchestrator cannot carry out DoThing: this thing's data cannot be sent";
    expect(ended).toEqual([{ entityId: "bad", reason }]);
    // Every step is recorded, the failed one too: an auditor sees what was tried.
    const steps = await store.readStream("workflow-things");
    expect(steps.map((e) => (e.data as { Input: { Stream: string } }).Input.Stream)).toEqual([
      "node-first",
      "node-bad",
      "node-flaky",
      "node-after",
    ]);
  });

  it("an entity that cannot be ended either is left, and the workflow goes on", async () => {
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    cleanups.push(() => store.close());
    const done: string[] = [];
    const handler = (c: IssuedCommand) => {
      if (c.entityId === "bad") throw new Error("corrupt");
      done.push(c.entityId);
    };
    const endEntity = async () => {
      throw new Error("its stream is corrupt too");
    };
    const host = new ProcessorHost({ store, logger: silentLogger, retryDelayMs: 10 });
    host.add(new WorkflowHost(things, { store, handlers: { thing: handler }, logger: silentLogger, endEntity }));
    await host.start();
    cleanups.push(() => host.stop());
    for (const id of ["bad", "after"]) await happen(store, id);
    await waitFor(
      () => done.includes("after"),
      10_000,
      () => "the step after the bad one ran",
    );
    expect(done).toEqual(["after"]);
  });
});
