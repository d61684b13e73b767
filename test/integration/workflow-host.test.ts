import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/actors/clock.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager } from "../../src/actors/node-manager.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { deterministicId } from "../../src/events/store/deterministic-id.ts";
import { ProcessorHost } from "../../src/projections/processor-host.ts";
import { forgetDeletedNodes } from "../../src/workflows/forget-deleted-nodes.ts";
import { WORKFLOW_STEP_EVENT, WorkflowHost } from "../../src/workflows/workflow-host.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { waitFor } from "../support/shoal-process.ts";
import { recoverNodes } from "../support/recover-nodes.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function writer(file: string) {
  const store = new SqliteEventStore(file);
  const manager = new NodeManager({
    store,
    clock: systemClock,
    logger: silentLogger,
    manualApproval: false,
    thresholds: new HealthThresholds({ disconnectMs: 60_000, unknownMs: 300_000 }),
  });
  cleanups.push(async () => {
    manager.stop();
    await store.close();
  });
  return { store, manager };
}

async function runWorkflow(store: SqliteEventStore, manager: NodeManager) {
  const host = new ProcessorHost({ store, logger: silentLogger });
  const workflow = new WorkflowHost(forgetDeletedNodes, {
    store,
    handlers: { "node-liveness": (c) => manager.forgetIfGone(c.entityId) },
    logger: silentLogger,
  });
  // The processor's name keys its stored checkpoint: it stays what it was when the actor was `system:workflow-…`.
  expect(workflow.name).toBe("workflow-forget-deleted-nodes");
  const progress = host.add(workflow);
  await host.start();
  cleanups.push(() => host.stop());
  return { host, progress };
}

describe("the forget-deleted-nodes workflow", () => {
  it("makes an orchestrator forget a node another writer deleted, records why, and never acts twice", async () => {
    const file = join(tempDir(), "shoal.db");
    const a = writer(file);
    await recoverNodes(a.manager, a.store);
    await a.manager.register(computeInfo("n1"), commandContext({ type: "node", id: "n1" }));
    const b = writer(file);
    await recoverNodes(b.manager, b.store);
    expect(b.manager.heartbeat("n1")).toBeUndefined(); // B tracks n1 too

    const deleted = await a.manager.operatorAction(
      "delete",
      "n1",
      commandContext({ type: "operator", id: "alice" }, { reason: "decommissioned" }),
    );
    // Until B sees the delete, it still takes n1's heartbeats: the workflow is what tells it.
    expect(b.manager.heartbeat("n1")).toBeUndefined();
    const { progress, host } = await runWorkflow(b.store, b.manager);
    await progress.waitFor(deleted.position, 10_000);
    await waitFor(
      async () => (await b.store.readStream("workflow-forget-deleted-nodes")).length === 1,
      10_000,
      () => "the step recorded",
    );
    expect(() => b.manager.heartbeat("n1")).toThrow("node not registered: n1");

    const [step] = await b.store.readStream("workflow-forget-deleted-nodes");
    const deleteEvent = (await b.store.readStream("node-n1")).find((e) => e.type === "NodeDeleted")!;
    // The step's id and its command's, derived from the workflow's name and the input as they always were.
    expect(step!.id).toBe(deterministicId("forget-deleted-nodes", deleteEvent.id));
    expect(step).toMatchObject({
      type: WORKFLOW_STEP_EVENT,
      data: {
        Workflow: "forget-deleted-nodes",
        Input: { EventID: deleteEvent.id, Stream: "node-n1", Type: "NodeDeleted", Position: deleteEvent.position },
        Commands: [
          {
            CommandID: deterministicId("forget-deleted-nodes", deleteEvent.id, "0"),
            Handler: "node-liveness",
            EntityID: "n1",
            Type: "ForgetNodeLiveness",
            Reason: "the node was deleted",
          },
        ],
      },
      metadata: {
        actor: { type: "workflow", id: "forget-deleted-nodes" },
        causationId: deleteEvent.id,
        correlationId: deleteEvent.metadata.correlationId,
      },
    });

    // A replay of the same input (no checkpoint: from the start of the store) stores no second step.
    await host.stop();
    const again = await runWorkflow(b.store, b.manager);
    const head = (await b.store.readAll()).at(-1)!.position;
    await again.progress.waitFor(head, 10_000);
    expect(await b.store.readStream("workflow-forget-deleted-nodes")).toHaveLength(1);
  });
});
