import { randomUUID } from "node:crypto";
import type { Clock } from "../../src/actors/clock.ts";
import { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import { EntityActor } from "../../src/actors/entity-actor.ts";
import { nodeKind } from "../../src/actors/node-kind.ts";
import type { EventStore } from "../../src/events/store/event-store.ts";

/** A node's actor on this store, its retries waited out on this clock (a ManualClock in tests). */
export const nodeActor = (id: string, store: EventStore, clock: Clock) =>
  new EntityActor(nodeKind, id, { store, clock, deadlines: new DeadlineScheduler(clock), newEventId: randomUUID });
