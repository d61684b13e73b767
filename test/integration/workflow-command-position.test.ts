import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import type { IssuedCommand, Workflow } from "../../src/workflows/workflow.ts";
import { WorkflowHost } from "../../src/workflows/workflow-host.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * A workflow command carries its input event's store position, so its handler can wait for a read model (another
 * processor, at its own pace) to have folded that event before it acts: the drain waits so for the node read model
 * placement reads. A real SQLite store and processor host; the read model is held back until the handler waits.
 */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const things: Workflow = {
  name: "things",
  react: ({ event, stream }) =>
    event.type === "NodeCordoned"
      ? [{ handler: "thing", entityId: stream, type: "DoThing", reason: "a thing happened" }]
      : [],
};

describe("a workflow command", () => {
  it("carries its input's store position: its handler waits for a slower read model to have folded it", async () => {
    const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
    cleanups.push(() => store.close());
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const folded: number[] = [];
    const host = new ProcessorHost({ store, logger: silentLogger });
    const readModel = host.add({
      name: "slow-read-model",
      handle: async (batch) => {
        await gate;
        for (const e of batch) folded.push(e.position);
      },
    });
    const seen: { position: number | undefined; foldedFirst: boolean }[] = [];
    let waiting = false;
    const handler = async (c: IssuedCommand) => {
      waiting = true;
      await readModel.waitFor(c.causationPosition, 10_000);
      seen.push({ position: c.causationPosition, foldedFirst: folded.includes(c.causationPosition ?? -1) });
    };
    host.add(new WorkflowHost(things, { store, handlers: { thing: handler }, logger: silentLogger }));
    await host.start();
    cleanups.push(() => host.stop());
    // Before the host stops (cleanups run in reverse): a read model still held back would hold up its stop.
    cleanups.push(() => open());

    const actor = { type: "system" as const, id: "test" };
    const metadata = { time: new Date().toISOString(), actor, correlationId: "c", causationId: "c" };
    const cordoned = { type: "NodeCordoned" as const, data: { NodeID: "1", Reason: "a thing happened", By: actor } };
    const appended = await store.append("node-1", [encodeNodeEvent(cordoned, metadata, randomUUID())], "any");
    await waitFor(
      () => waiting,
      10_000,
      () => "the handler called",
    );
    expect(seen).toEqual([]);
    open();
    await waitFor(
      () => seen.length === 1,
      10_000,
      () => "the handler went on once the read model folded its input",
    );
    expect(seen).toEqual([{ position: appended.position, foldedFirst: true }]);
  });
});
