import type { EventStreamFigures } from "../../metrics/metric-collectors.ts";
import { EventStreamHub } from "../../projections/event-stream/event-stream-hub.ts";
import { Later, type Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";
import type { NodeModule } from "./node-module.ts";

export interface EventStreamModule extends Module {
  /** The HTTP event stream's follower of the store (follow on). */
  readonly hub: Later<EventStreamHub>;
}

/** The store's new events framed once for every HTTP event stream client (GET /events/stream). */
export function eventStreamModule(
  context: OrchestratorContext,
  offers: { readonly nodes: NodeModule },
): EventStreamModule {
  const { config, processors, deadlines, logger, metrics } = context;
  const hub = new Later<EventStreamHub>("the event stream hub", "follow");
  return {
    name: "event stream",
    hub,

    follow() {
      const made = hub.set(
        new EventStreamHub({
          // Older events are read from the store by each client that asks for them.
          startAt: offers.nodes.headAtStart.get(),
          ringBytes: config["API.EventStream.RingBytes"],
          keepAliveMs: config["API.EventStream.KeepAlive"],
          maxBufferedBytes: config["API.EventStream.MaxBufferedBytes"],
          onCutOff: () => metrics.eventStreamCutOff(),
          encoded: context.encodedEvents,
          maxCatchUps: config["API.EventStream.MaxCatchUps"],
          deadlines,
          logger: logger.child({ component: "event-stream" }),
        }),
      );
      processors.add(made);
      metrics.registerCollector("eventStream", () => eventStreamFigures(made));
    },
  };
}

/** What /metrics shows of the hub: its clients, what they and the ring hold, and the catch-up turns. */
export function eventStreamFigures(hub: EventStreamHub): EventStreamFigures {
  return {
    clients: hub.clients,
    bufferedBytes: hub.bufferedClientBytes,
    ringBytes: hub.bufferedRingBytes,
    catchingUp: hub.catchUps.taken,
    waitingForTurn: hub.catchUps.waiting,
  };
}
