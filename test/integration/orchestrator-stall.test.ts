import { createServer, connect, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/actors/clock.ts";
import { commandContext } from "../../src/actors/command-context.ts";
import { HealthThresholds } from "../../src/actors/health-thresholds.ts";
import { NodeManager } from "../../src/actors/node-manager.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { computeInfo, silentLogger, tempDir } from "../support/fixtures.ts";
import { recoverNodes } from "../support/recover-nodes.ts";

const DISCONNECT_MS = 1500;
const opened: { store: SqliteEventStore; manager: NodeManager }[] = [];
afterEach(async () => {
  for (const { store, manager } of opened.splice(0)) {
    manager.stop();
    await store.close();
  }
});

function setup(stallThresholdMs: number | undefined) {
  const store = new SqliteEventStore(join(tempDir(), "shoal.db"));
  const manager = new NodeManager({
    store,
    clock: systemClock,
    logger: silentLogger,
    manualApproval: false,
    thresholds: new HealthThresholds({ disconnectMs: DISCONNECT_MS, unknownMs: 10 * DISCONNECT_MS }),
    ...(stallThresholdMs === undefined ? {} : { stallThresholdMs }),
  });
  opened.push({ store, manager });
  return { store, manager };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** What a request that never yields does to the orchestrator: nothing else runs meanwhile. */
function blockEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* busy */
  }
}

/**
 * A heartbeat sent while the orchestrator is blocked waits in its socket. When the loop resumes,
 * timers that came due meanwhile run before the socket is read: that order is what turned
 * healthy nodes UNHEALTHY. A real TCP socket reproduces it; the block runs where a request
 * handler would, outside the timers phase.
 */
async function stallWithQueuedHeartbeat(manager: NodeManager, nodeId: string, ms: number): Promise<void> {
  const received = new Promise<void>((resolve, reject) => {
    const server = createServer((socket) => {
      socket.once("data", () => {
        void manager.heartbeat(nodeId);
        socket.destroy();
        server.close();
        resolve();
      });
    });
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const client = connect((server.address() as AddressInfo).port, "127.0.0.1", () => {
        setImmediate(() => {
          client.write("heartbeat");
          blockEventLoop(ms);
          client.end();
        });
      });
    });
  });
  await received;
}

const types = async (store: SqliteEventStore, id: string) => (await store.readStream(`node-${id}`)).map((e) => e.type);

describe("an orchestrator that stalls", () => {
  it("does not blame a heartbeating node for its own stall, and still finds a dead one afterwards", async () => {
    const { store, manager } = setup(500);
    await recoverNodes(manager, store);
    const ctx = (id: string) => commandContext({ type: "node", id });
    await manager.register(computeInfo("alive"), ctx("alive"));
    await manager.register(computeInfo("dead"), ctx("dead"));
    await stallWithQueuedHeartbeat(manager, "alive", DISCONNECT_MS + 1000);
    const stallEnded = Date.now();
    await sleep(300);
    expect(await types(store, "alive")).toEqual(["NodeRegistered"]);
    expect(await types(store, "dead")).toEqual(["NodeRegistered"]);
    // The dead node gets a full DisconnectTimeout from the end of the stall, then is found out.
    while (Date.now() < stallEnded + DISCONNECT_MS + 1000) {
      void manager.heartbeat("alive");
      await sleep(200);
    }
    expect(await types(store, "dead")).toEqual(["NodeRegistered", "NodeBecameUnhealthy"]);
    expect(await types(store, "alive")).toEqual(["NodeRegistered"]);
  });

  it("without the stall watch, the same stall is recorded as the node's failure (what the watch prevents)", async () => {
    const { store, manager } = setup(undefined);
    await recoverNodes(manager, store);
    await manager.register(computeInfo("alive"), commandContext({ type: "node", id: "alive" }));
    await stallWithQueuedHeartbeat(manager, "alive", DISCONNECT_MS + 1000);
    await sleep(300);
    expect(await types(store, "alive")).toEqual(["NodeRegistered", "NodeBecameUnhealthy", "NodeBecameHealthy"]);
  });
});
