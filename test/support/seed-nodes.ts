import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pino } from "pino";
import { systemClock } from "../../src/actors/clock.ts";
import { systemContext } from "../../src/actors/command-context.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { EntityRegistry } from "../../src/actors/entity-registry.ts";
import { nodeKind } from "../../src/actors/node-kind.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { virtualNodeInfo } from "../../src/sim/virtual-node-info.ts";

export interface SeededNode {
  readonly nodeId: string;
  /** Its index in the fleet (virtualNodeInfo's shape depends on it). */
  readonly index: number;
  /** The key it will log in with: stored as NodeCredentialBound, as a join does. */
  readonly publicKey?: string;
}

const CHUNK = 2_000;

/**
 * Registers nodes in `<dataDir>/shoal.db` before `shoal serve` starts (a benchmark's fleet, a test's), through the
 * same actor host, decider and codec the orchestrator uses (NodeRegistered, plus NodeCredentialBound for a node with
 * a key): what the joins would have stored, without one nats-server reload per join.
 * Returns the number of events written.
 */
export async function seedNodes(
  dataDir: string,
  nodes: readonly SeededNode[],
  manualApproval: boolean,
): Promise<number> {
  const store = new SqliteEventStore(join(dataDir, "shoal.db"));
  const registry = new EntityRegistry(
    nodeKind,
    { store, clock: systemClock, deadlines: new DeadlineScheduler(systemClock), newEventId: randomUUID },
    { idleMs: 60_000, maxResident: CHUNK, logger: pino({ level: "silent" }) },
  );
  let events = 0;
  try {
    const context = systemContext("seeded by a benchmark");
    for (let from = 0; from < nodes.length; from += CHUNK) {
      const results = await Promise.all(
        nodes.slice(from, from + CHUNK).map(({ nodeId, index, publicKey }) =>
          registry.execute(
            nodeId,
            {
              type: "Register",
              info: virtualNodeInfo(nodeId, index),
              manualApproval,
              ...(publicKey === undefined ? {} : { publicKey }),
            },
            context,
          ),
        ),
      );
      for (const r of results) events += r.events.length;
      registry.sweep();
    }
  } finally {
    registry.stop();
    await store.close();
  }
  return events;
}
