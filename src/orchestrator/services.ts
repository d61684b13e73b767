import { join } from "node:path";
import { Context, Effect, Layer } from "effect";
import { connect, type NatsConnection } from "nats";
import type { Logger } from "pino";
import type { ShoalConfig } from "../config/keys.ts";
import { EsdbEventStore } from "../events/eventstoredb/esdb-event-store.ts";
import { SqliteEventStore } from "../events/sqlite/sqlite-event-store.ts";
import type { CheckpointStore, EventStore } from "../events/store/event-store.ts";
import { EmbeddedNatsServer } from "../transport/embedded-nats-server.ts";
import { StartupError } from "../errors/startup-error.ts";

export { StartupError };

export class Store extends Context.Tag("shoal/Store")<Store, EventStore & CheckpointStore>() {}
export class Nats extends Context.Tag("shoal/Nats")<Nats, { readonly nc: NatsConnection; readonly url: string }>() {}

const attempt = <A>(what: string, f: () => Promise<A> | A) =>
  Effect.tryPromise({
    try: async () => f(),
    catch: (e) => new StartupError(`${what}: ${e instanceof Error ? e.message : String(e)}`),
  });

/** Refuses a store that cannot take a write now (read-only, disk full, unreachable), closing it again. */
async function usable<S extends EventStore>(store: S, check: (store: S) => Promise<void> | void = () => undefined): Promise<S> {
  try {
    await store.checkWritable();
    await check(store);
    return store;
  } catch (e) {
    await store.close().catch(() => undefined);
    throw e;
  }
}

/** EventStoreDB when EventStore.URL is set, else the embedded SQLite file in DataDir. */
export function storeLayer(config: ShoalConfig, logger: Logger): Layer.Layer<Store, StartupError> {
  const url = config["EventStore.URL"];
  if (url !== "") {
    if (!/^esdb(\+discover)?:\/\//.test(url)) {
      return Layer.fail(new StartupError(`EventStore.URL must start with esdb:// or esdb+discover://, got ${url}`));
    }
    return Layer.scoped(
      Store,
      Effect.acquireRelease(
        attempt("cannot use EventStoreDB", () =>
          usable(new EsdbEventStore(url), async (store) => {
            await store.readAll({ maxCount: 1 }); // fail now, not on the first command
            logger.info({ url }, "using EventStoreDB");
          }),
        ),
        (store) => Effect.promise(() => store.close()),
      ),
    );
  }
  const file = join(config.DataDir, "shoal.db");
  return Layer.scoped(
    Store,
    Effect.acquireRelease(
      attempt("cannot use the event store", () =>
        usable(new SqliteEventStore(file), () => logger.info({ file }, "using the embedded SQLite event store")),
      ),
      (store) => Effect.promise(() => store.close()),
    ),
  );
}

/** An external NATS when Orchestrator.NATS.URL is set, else a nats-server child on Orchestrator.Port. */
export function natsLayer(config: ShoalConfig, logger: Logger): Layer.Layer<Nats, StartupError> {
  const external = config["Orchestrator.NATS.URL"];
  const connectTo = (url: string) =>
    Effect.acquireRelease(
      attempt(`cannot connect to NATS at ${url}`, () =>
        connect({ servers: url, name: "shoal-orchestrator", maxReconnectAttempts: -1, reconnectTimeWait: 1000 }),
      ),
      (nc) => Effect.promise(() => nc.drain().catch(() => undefined)),
    );
  if (external !== "") {
    return Layer.scoped(Nats, Effect.map(connectTo(external), (nc) => ({ nc, url: external })));
  }
  return Layer.scoped(
    Nats,
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        attempt("cannot start the embedded NATS server", () =>
          EmbeddedNatsServer.start({ host: config["Orchestrator.Host"], port: config["Orchestrator.Port"], dir: join(config.DataDir, "nats"), logger }),
        ),
        (s) => Effect.promise(() => s.stop()),
      );
      const nc = yield* connectTo(server.url);
      return { nc, url: server.url };
    }),
  );
}
