import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NodeStateJson } from "../../../src/api/nodes/node-state-json.ts";
import { toNodeState } from "../../../src/api/nodes/node-state.ts";
import { encodeNodeEvent } from "../../../src/events/catalog/node-event-codec.ts";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import type { NodeInfo } from "../../../src/events/catalog/node-info.ts";
import { SqliteEventStore } from "../../../src/events/sqlite/sqlite-event-store.ts";
import type { NodeView } from "../../../src/projections/node-view.ts";
import { NodeViews } from "../../../src/projections/node-views.ts";
import { SharedNodeParts } from "../../../src/projections/shared-node-parts.ts";
import { computeInfo, tempDir } from "../../support/fixtures.ts";

const opened: SqliteEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/** Folds `histories` (per node, in order) through a real store into NodeViews, as the orchestrator does. */
async function fold(histories: readonly [string, NodeEvent][]): Promise<NodeViews> {
  const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  opened.push(store);
  const revisions = new Map<string, number>();
  let i = 0;
  for (const [id, event] of histories) {
    const revision = revisions.get(id) ?? -1;
    const metadata = {
      time: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      actor: { type: "system" as const, id: "t" },
      correlationId: `c${i}`,
      causationId: `c${i}`,
    };
    await store.append(
      `node-${id}`,
      [encodeNodeEvent(event, metadata, `e${i++}`)],
      revision === -1 ? "no_stream" : revision,
    );
    revisions.set(id, revision + 1);
  }
  const views = new NodeViews();
  for (const recorded of await store.readAll()) views.handle(recorded);
  return views;
}

const registered = (id: string, info: NodeInfo): [string, NodeEvent] => [
  id,
  {
    type: "NodeRegistered",
    data: { NodeID: id, NodeType: "Compute", Info: info, Membership: "APPROVED", Lifecycle: 1 },
  },
];
const infoUpdated = (id: string, info: NodeInfo): [string, NodeEvent] => [
  id,
  { type: "NodeInfoUpdated", data: { NodeID: id, Info: info, Changed: ["Labels"] } },
];
const view = (views: NodeViews, id: string) => views.get(id) as NodeView;

describe("shared NodeInfo parts", () => {
  it("nodes with equal labels, compute info and version share one frozen object of each", async () => {
    const views = await fold([
      registered("node-a", computeInfo("node-a", { zone: "a" })),
      registered("node-b", computeInfo("node-b", { zone: "a" })),
    ]);
    const [a, b] = [view(views, "node-a"), view(views, "node-b")];
    expect(a.info).not.toBe(b.info);
    expect(a.info.Labels).toBe(b.info.Labels);
    expect(a.info.ComputeNodeInfo).toBe(b.info.ComputeNodeInfo);
    expect(a.info.BacalhauVersion).toBe(b.info.BacalhauVersion);
    for (const part of [
      a.info,
      a.info.Labels,
      a.info.ComputeNodeInfo,
      a.info.ComputeNodeInfo?.ExecutionEngines,
      a.info.ComputeNodeInfo?.MaxCapacity,
      a.info.BacalhauVersion,
    ]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    // Each keeps its own id and host name.
    expect([a.info.NodeID, a.info.Hostname, b.info.NodeID, b.info.Hostname]).toEqual([
      "node-a",
      "host-node-a",
      "node-b",
      "host-node-b",
    ]);
  });

  it("a change to one node never shows in another that shared its parts", async () => {
    const views = await fold([
      registered("node-a", computeInfo("node-a", { zone: "a" })),
      registered("node-b", computeInfo("node-b", { zone: "a" })),
      infoUpdated("node-a", {
        ...computeInfo("node-a", { zone: "b", gpu: "yes" }),
        BacalhauVersion: { GitVersion: "v0.2.0", GOOS: "linux", GOARCH: "arm64" },
      }),
    ]);
    const [a, b] = [view(views, "node-a"), view(views, "node-b")];
    expect(a.info.Labels).toEqual({ "Operating-System": "linux", Architecture: "amd64", zone: "b", gpu: "yes" });
    expect(a.info.BacalhauVersion).toEqual({ GitVersion: "v0.2.0", GOOS: "linux", GOARCH: "arm64" });
    expect(b.info).toEqual(computeInfo("node-b", { zone: "a" }));
    expect(a.info.Labels).not.toBe(b.info.Labels);
    // Unchanged parts are still shared.
    expect(a.info.ComputeNodeInfo).toBe(b.info.ComputeNodeInfo);
  });

  it("a shared part refuses to be changed in place, and the other node's view stays as it was", async () => {
    const views = await fold([
      registered("node-a", computeInfo("node-a", { zone: "a" })),
      registered("node-b", computeInfo("node-b", { zone: "a" })),
    ]);
    const [a, b] = [view(views, "node-a"), view(views, "node-b")];
    const labels = a.info.Labels as Record<string, string>;
    const capacity = a.info.ComputeNodeInfo?.MaxCapacity as { CPU?: number };
    const engines = a.info.ComputeNodeInfo?.ExecutionEngines as string[];
    expect(() => {
      labels.zone = "b";
    }).toThrow(TypeError);
    expect(() => {
      capacity.CPU = 1;
    }).toThrow(TypeError);
    expect(() => engines.push("wasm")).toThrow(TypeError);
    expect(() => {
      (a.info as { Hostname: string }).Hostname = "elsewhere";
    }).toThrow(TypeError);
    expect(b.info).toEqual(computeInfo("node-b", { zone: "a" }));
    expect(a.info).toEqual(computeInfo("node-a", { zone: "a" }));
  });

  it("serves byte for byte what the unshared info serves", async () => {
    const info = computeInfo("node-a", { zone: "a", "x.io/rack": "r1" });
    const views = await fold([
      registered("node-a", info),
      registered("node-b", computeInfo("node-b", { zone: "a", "x.io/rack": "r1" })),
    ]);
    const shared = view(views, "node-a");
    const unshared: NodeView = { ...shared, info };
    expect(JSON.stringify(toNodeState(shared, undefined))).toBe(JSON.stringify(toNodeState(unshared, undefined)));
    expect(new NodeStateJson().render(shared, undefined)).toBe(JSON.stringify(toNodeState(unshared, undefined)));
  });

  it("keeps an info of another key order as it is, and does not share parts of unequal JSON", () => {
    const parts = new SharedNodeParts();
    const reordered = {
      NodeType: "Compute",
      NodeID: "n",
      Hostname: "h",
      Labels: {},
      BacalhauVersion: { GitVersion: "v", GOOS: "l", GOARCH: "a" },
    } as NodeInfo;
    expect(parts.info(reordered, "n")).toBe(reordered);
    const one = parts.info(
      {
        NodeID: "n1",
        NodeType: "Requester",
        Hostname: "h",
        Labels: { a: "1", b: "2" },
        BacalhauVersion: { GitVersion: "v", GOOS: "l", GOARCH: "a" },
      },
      "n1",
    );
    const other = parts.info(
      {
        NodeID: "n2",
        NodeType: "Requester",
        Hostname: "h",
        Labels: { b: "2", a: "1" },
        BacalhauVersion: { GitVersion: "v", GOOS: "l", GOARCH: "a" },
      },
      "n2",
    );
    // Same labels in another order: another JSON, so another object (the response keeps its order).
    expect(one.Labels).not.toBe(other.Labels);
    expect(Object.keys(other.Labels)).toEqual(["b", "a"]);
    expect(one.BacalhauVersion).toBe(other.BacalhauVersion);
  });
});
