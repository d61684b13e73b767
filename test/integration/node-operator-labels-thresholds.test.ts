import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager } from "../../src/actors/node-manager.ts";
import type { HealthOverride } from "../../src/config/keys.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { recoverNodes } from "../support/recover-nodes.ts";

// Health-threshold groups select nodes by their effective labels: an operator's label moves a
// node into a group (or out of one), also after a restart. Real SQLite, a manual clock.

const S = 1000;
const M = 60 * S;
const nodeCtx = (id: string) => commandContext({ type: "node", id });
const opCtx = commandContext({ type: "operator", id: "alice" }, { reason: "moved to the edge" });
const OVERRIDES: HealthOverride[] = [{ Selector: "zone=edge", DisconnectTimeout: 5 * M, UnknownTimeout: 30 * M }];

const opened: { store: SqliteEventStore; manager: NodeManager }[] = [];
function setup(file: string, clock: ManualClock) {
  const store = new SqliteEventStore(file);
  const manager = new NodeManager({
    store,
    clock,
    logger: silentLogger,
    manualApproval: false,
    thresholds: new HealthThresholds({ disconnectMs: 1 * M, unknownMs: 5 * M }, OVERRIDES),
  });
  opened.push({ store, manager });
  return { store, manager };
}
afterEach(async () => {
  for (const { store, manager } of opened.splice(0)) {
    manager.stop();
    await store.close();
  }
});
const types = async (store: SqliteEventStore, id: string) => (await store.readStream(`node-${id}`)).map((e) => e.type);

describe("health-threshold groups follow the operator's labels", () => {
  it("a node labelled into the group gets its thresholds; one whose label is hidden leaves it", async () => {
    const clock = new ManualClock();
    const { manager, store } = setup(join(tempDir(), "shoal.db"), clock);
    await recoverNodes(manager, store);
    await manager.register(computeInfo("core1", { zone: "core" }), nodeCtx("core1"));
    await manager.register(computeInfo("edge1", { zone: "edge" }), nodeCtx("edge1"));
    await manager.operatorAction({ action: "label", set: { zone: "edge" }, remove: [], reset: [] }, "core1", opCtx);
    await manager.operatorAction({ action: "label", set: {}, remove: ["zone"], reset: [] }, "edge1", opCtx);
    await clock.advance(1 * M);
    // edge1 reports zone=edge but the operator hid it: the default minute applies.
    expect(await types(store, "edge1")).toContain("NodeBecameUnhealthy");
    // core1 reports zone=core but the operator says edge: five minutes.
    expect(await types(store, "core1")).not.toContain("NodeBecameUnhealthy");
    await clock.advance(4 * M);
    expect(await types(store, "core1")).toContain("NodeBecameUnhealthy");
  });

  it("after a restart the recovered node keeps the group its operator labels put it in", async () => {
    const clock = new ManualClock();
    const file = join(tempDir(), "shoal.db");
    const first = setup(file, clock);
    await recoverNodes(first.manager, first.store);
    await first.manager.register(computeInfo("core1", { zone: "core" }), nodeCtx("core1"));
    await first.manager.operatorAction(
      { action: "label", set: { zone: "edge" }, remove: [], reset: [] },
      "core1",
      opCtx,
    );
    first.manager.stop();
    const second = setup(file, clock);
    await recoverNodes(second.manager, second.store);
    await clock.advance(2 * M);
    expect(await types(second.store, "core1")).toEqual(["NodeRegistered", "NodeLabelsSet"]);
    await clock.advance(3 * M);
    expect(await types(second.store, "core1")).toContain("NodeBecameUnhealthy");
  });
});
