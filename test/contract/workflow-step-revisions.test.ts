import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { deterministicId } from "../../src/events/store/deterministic-id.ts";
import type { EventStore } from "../../src/events/store/event-store.ts";
import { StoreUnavailableError } from "../../src/events/store/store-errors.ts";
import { WORKFLOW_STEP_EVENT, WorkflowHost } from "../../src/workflows/workflow-host.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";
import type { Expected } from "../support/kurrent-stand-in/stand-in-log.ts";
import { overriding } from "../support/overriding.ts";
import { cordonedInput, thingsWorkflow } from "../support/things-workflow.ts";

/**
 * A workflow's steps on every adapter: each appended with its stream's exact expected revision (KurrentDB recognises
 * a re-append of the same ids at the same revision from its index; under "any" only from a cache of recent writes),
 * and stored once however the answers get lost, other writers come between, batches come again and the host restarts.
 */
const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close();
});

interface Backend {
  /** A new connection to the same store, as a restart makes. */
  open(): Promise<EventStore>;
  /** The expected revision of each append to `stream`, where the adapter lets a test see it. */
  expectedOf?(stream: string): readonly Expected[];
}

const backends: [string, () => Promise<Backend>][] = [
  [
    "SQLite",
    async () => {
      const file = join(tempDir("shoal-step-revisions-"), "shoal.db");
      return { open: async () => new SqliteEventStore(file) };
    },
  ],
  [
    "the KurrentDB stand-in",
    async () => {
      const standIn = await KurrentStandIn.start();
      closing.push(standIn);
      return {
        open: () => EsdbEventStore.open(standIn.url),
        expectedOf: (stream) => standIn.appendAttempts.filter((a) => a.stream === stream).map((a) => a.expected),
      };
    },
  ],
];

describe.each(backends)("workflow steps on %s", (_, backendOf) => {
  it("are stored once: an answer lost, another writer between, the batch delivered again, a restart", async () => {
    const backend = await backendOf();
    const store = await backend.open();
    const things = thingsWorkflow();
    const stream = `workflow-${things.name}`;
    const stepOf = (input: string) => deterministicId(things.name, input);
    let answerLostOf: string | undefined;
    const lossy = overriding(store, {
      // The append lands; its answer does not come back (a connection cut in between).
      append: async (s, events, expected) => {
        const result = await store.append(s, events, expected);
        if (events[0]?.id !== answerLostOf) return result;
        answerLostOf = undefined;
        throw new StoreUnavailableError({ reason: "the connection closed before the answer came" });
      },
    });
    const ran: string[] = [];
    const handlers = { thing: (c: { causationId: string }) => void ran.push(c.causationId) };
    const anotherWriter = () =>
      store.append(stream, [{ id: randomUUID(), type: "Other", data: {}, metadata: { time: "t" } }], "any");
    const [z1, a1, b1] = [cordonedInput("z1", 1), cordonedInput("a1", 2), cordonedInput("b1", 3)];

    const host = new WorkflowHost(things, { store: lossy, handlers, logger: silentLogger });
    await host.handle([z1]);
    // Behind the host's back: its next step's revision is taken.
    await anotherWriter();
    answerLostOf = stepOf("a1");
    await expect(host.handle([a1, b1])).rejects.toThrow(StoreUnavailableError);
    await anotherWriter();
    await host.handle([a1, b1]);
    expect(ran).toEqual(["z1", "a1", "b1"]);
    await store.close();

    // A restart replays from the start: every step is found stored, none appended again; the commands go again.
    const again = await backend.open();
    closing.push(again);
    const restarted = new WorkflowHost(things, { store: again, handlers, logger: silentLogger });
    await restarted.handle([z1, a1, b1]);
    expect(ran).toEqual(["z1", "a1", "b1", "z1", "a1", "b1"]);

    const stored = await again.readStream(stream);
    expect(stored.map((e) => (e.type === WORKFLOW_STEP_EVENT ? e.id : e.type))).toEqual([
      stepOf("z1"),
      "Other",
      stepOf("a1"),
      "Other",
      stepOf("b1"),
    ]);
    // Only the other writer said "any": every step went with the exact revision.
    const expected = backend.expectedOf?.(stream);
    if (expected !== undefined) expect(expected).toEqual(["no_stream", "any", 0, 1, "any", 3]);
  });
});
