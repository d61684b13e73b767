import { onDuty } from "../../cluster/on-duty.ts";
import { NatsEventPublisher } from "../../projections/nats-event-publisher.ts";
import type { ProcessorProgress } from "../../projections/processor.ts";
import { jetStreamBudget } from "../jetstream-budget.ts";
import { JetStreamWatch } from "../jetstream-watch.ts";
import { Later, type Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";

export interface EventPublisherModule extends Module {
  /** The publisher's progress: `position` is the last event JetStream acknowledged (follow on). */
  readonly lane: Later<ProcessorProgress>;
  /** JetStream's health, for /agent/ready (serve on). */
  readonly jetStream: Later<JetStreamWatch>;
}

/** The store's events published on NATS (JetStream SHOAL_EVENTS) for downstream systems, in store order. */
export function eventPublisherModule(context: OrchestratorContext): EventPublisherModule {
  const { config, store, logger, processors, deadlines, stops } = context;
  const { nc, eventsNc, server, jetStreamDir } = context.nats;
  const lane = new Later<ProcessorProgress>("the event publisher's processor", "follow");
  const jetStream = new Later<JetStreamWatch>("the JetStream watch", "serve");
  // Among several orchestrators one publishes, so SHOAL_EVENTS takes each event once, in store order.
  const duty = context.cluster.duty("publisher");
  return {
    name: "event publisher",
    lane,
    jetStream,

    async follow() {
      // JetStream is checked first: a NATS that cannot take cluster events stops start-up here, before anything
      // follows the store.
      const budget = jetStreamBudget(config);
      const publisher = new NatsEventPublisher(
        eventsNc,
        store,
        logger.child({ component: "event-publisher" }),
        budget.eventStreamBytes,
        {
          clock: context.clock,
          deadlines,
          encoded: context.encodedEvents,
          // On a NATS cluster, as many copies as the leases have: readers keep getting events while a server is down.
          replicas: budget.replicas,
        },
      );
      await publisher.start();
      lane.set(processors.add(onDuty(publisher, duty)));
    },

    serve() {
      const watch = new JetStreamWatch({
        nc: eventsNc,
        core: nc,
        ...(server && jetStreamDir !== undefined ? { server, storeDir: jetStreamDir } : {}),
        logger: logger.child({ component: "jetstream" }),
        deadlines,
      });
      watch.start();
      stops.add({ name: "stopping the JetStream watch", run: () => watch.stop() });
      jetStream.set(watch);
    },
  };
}
