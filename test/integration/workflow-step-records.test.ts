import { describe, expect, it } from "vitest";
import { reactionEventsOf } from "../../machines/reactions/reaction-records.ts";
import { CorruptEventError, InvalidEventError } from "../../src/events/catalog/event-codec-errors.ts";
import { decodeWorkflowStep, encodeWorkflowStep } from "../../src/events/catalog/workflow-step-codec.ts";
import type { WorkflowStep } from "../../src/events/catalog/workflow-steps.ts";
import type { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import type { Workflow } from "../../src/workflows/workflow.ts";
import { WORKFLOW_STEP_EVENT, WorkflowHost } from "../../src/workflows/workflow-host.ts";
import { storedReactionRecord } from "../../src/workflows/nodes/stored-reaction-record.ts";
import { silentLogger } from "../support/fixtures.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { storesPerTest } from "../support/stores-per-test.ts";
import { envelopeOf } from "../support/recorded-event.ts";

/**
 * The workflows' step record (WorkflowStepRecorded) through the event catalog, on a real SQLite file: written as the
 * workflow host writes it, read back as the node-reactions queue's fold reads it.
 */
const STREAM = "workflow-node-reactions";
const TIME = "2026-11-29T00:00:00.000Z";
const metadata = {
  time: TIME,
  actor: { type: "workflow" as const, id: "node-reactions" },
  reason: "reacting to NodeBecameUnhealthy in node-n1",
  correlationId: "corr-1",
  causationId: "ev-1",
};
/** A QueueNodeLoss step, in the shape (and key order) steps have always been stored in. */
const STEP: WorkflowStep = {
  Workflow: "node-reactions",
  Input: { EventID: "ev-1", Stream: "node-n1", Type: "NodeBecameUnhealthy", Position: 7 },
  Commands: [
    {
      CommandID: "cmd-1",
      Handler: "node-work",
      EntityID: "n1",
      Type: "QueueNodeLoss",
      Reason: "node n1 became UNHEALTHY",
    },
  ],
};

const openStore = storesPerTest("shoal-step-records-");

/** Appends steps as they are, bypassing the codec (as an older Shoal, or a damaged file, left them). */
async function appendRaw(store: SqliteEventStore, steps: readonly unknown[]): Promise<void> {
  for (const [i, data] of steps.entries())
    await store.append(
      STREAM,
      [{ id: `raw-${i}`, type: WORKFLOW_STEP_EVENT, data, metadata: { ...metadata, schemaVersion: 1 } }],
      "any",
    );
}

describe("the workflows' step record in the event catalog", () => {
  it("round trip: stored in the shape it always had, read back typed, folded into the queue", async () => {
    const store = openStore();
    await store.append(STREAM, [encodeWorkflowStep(STEP, metadata, "s0")], "any");
    // A step as the host wrote it before the catalog had its schema reads back the same.
    await appendRaw(store, [JSON.parse(JSON.stringify(STEP))]);

    const [written, older] = await store.readStream(STREAM);
    expect(JSON.stringify(written!.data)).toBe(JSON.stringify(STEP));
    expect(written!.metadata).toEqual({ ...metadata, schemaVersion: 1 });
    expect(written!.schemaVersion).toBe(1);
    for (const stored of [written!, older!]) {
      expect(decodeWorkflowStep(stored)).toEqual(STEP);
      const record = storedReactionRecord(stored);
      expect(record).toMatchObject({ type: WORKFLOW_STEP_EVENT, data: STEP, at: Date.parse(TIME) });
      expect(reactionEventsOf(record!)).toEqual([
        {
          type: "NodeLossQueued",
          nodeId: "n1",
          reason: "node n1 became UNHEALTHY",
          causationId: "ev-1",
          correlationId: "corr-1",
          queuedBy: "cmd-1",
        },
      ]);
    }
  });

  it("refuses to write a malformed step, naming the field", () => {
    const badPosition = { ...STEP, Input: { ...STEP.Input, Position: -1 } };
    expect(() => encodeWorkflowStep(badPosition, metadata, "s0")).toThrow(InvalidEventError);
    expect(() => encodeWorkflowStep(badPosition, metadata, "s0")).toThrow(/\["Input"\].*\["Position"\]/s);
    const noEntity = { ...STEP, Commands: [{ ...STEP.Commands[0]!, EntityID: "" }] };
    expect(() => encodeWorkflowStep(noEntity, metadata, "s0")).toThrow(/\["Commands"\].*\["EntityID"\]/s);
  });

  it("the host records no step its schema rejects: the step fails, nothing is stored, no command runs", async () => {
    const store = openStore();
    const ran: string[] = [];
    const nameless: Workflow = {
      name: "nameless",
      react: () => [{ handler: "h", entityId: "", type: "DoIt", reason: "an entity without an id" }],
    };
    const host = new WorkflowHost(nameless, {
      store,
      handlers: { h: (c) => void ran.push(c.type) },
      logger: silentLogger,
    });
    const input = envelopeOf("node-n1", { type: "NodeDeleted", data: { NodeID: "n1", Membership: "APPROVED" } });
    await expect(host.handle([input])).rejects.toThrow(InvalidEventError);
    await expect(host.handle([input])).rejects.toThrow(/\["Commands"\].*\["EntityID"\]/s);
    expect(await store.readStream("workflow-nameless")).toEqual([]);
    expect(ran).toEqual([]);
  });

  it("a malformed stored step is corrupt: refused with its stream, revision and field named", async () => {
    const store = openStore();
    await appendRaw(store, [
      { ...STEP, Input: { ...STEP.Input, Position: "7" } },
      { ...STEP, Commands: [{ ...STEP.Commands[0], EntityID: undefined }] },
      { Input: STEP.Input, Commands: STEP.Commands },
    ]);
    const [position, entity, workflow] = await store.readStream(STREAM);
    expect(() => storedReactionRecord(position!)).toThrow(CorruptEventError);
    expect(() => storedReactionRecord(position!)).toThrow(/workflow-node-reactions@0: .*\["Input"\].*\["Position"\]/s);
    expect(() => storedReactionRecord(entity!)).toThrow(/workflow-node-reactions@1: .*\["Commands"\].*\["EntityID"\]/s);
    expect(() => storedReactionRecord(workflow!)).toThrow(/workflow-node-reactions@2: .*\["Workflow"\]/s);
  });

  it("an orchestrator does not start on a damaged step of the queue: its recovery names the record and the field", async () => {
    const config = await ownNatsOrchestratorConfig("shoal-step-records-start-");
    const store = openStore(config.DataDir);
    await appendRaw(store, [STEP, { ...STEP, Commands: [{ ...STEP.Commands[0], Type: 7 }] }]);
    await store.close();
    const started = startOrchestrator(config, silentLogger);
    await expect(started).rejects.toThrow(CorruptEventError);
    await expect(started).rejects.toThrow(/workflow-node-reactions@1: .*\["Commands"\].*\["Type"\]/s);
  }, 60_000);
});
