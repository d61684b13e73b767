import { join } from "node:path";
import { Context, Effect, Layer } from "effect";
import { connect, type NatsConnection } from "nats";
import type { Logger } from "pino";
import type { ShoalConfig } from "../config/keys.ts";
import { EsdbEventStore } from "../events/eventstoredb/esdb-event-store.ts";
import { SqliteEventStore } from "../events/sqlite/sqlite-event-store.ts";
import type { CheckpointStore, EventStore } from "../events/store/event-store.ts";
import { boundedStep } from "../lifecycle/bounded-step.ts";
import { closeNatsConnection } from "../transport/close-nats-connection.ts";
import { EmbeddedNatsServer } from "../transport/embedded-nats-server.ts";

export class Store extends Context.Tag("shoal/Store")<Store, EventStore & CheckpointStore>() {}
export class Nats extends Context.Tag("shoal/Nats")<
  Nats,
  { readonly nc: NatsConnection; readonly url: string; /** The supervised child, when Shoal runs its own. */ readonly server?: EmbeddedNatsServer }
>() {}

// A stopped or wedged server keeps the socket open; pings notice it (a disconnect, so the node
// manager stops blaming nodes) within about three intervals. A ping every 2 s costs nothing.
const STALE_AFTER = { pingInterval: 2_000, maxPingOut: 2 };
const STORE_CLOSE_TIMEOUT_MS = 5_000;

export class StartupError extends Error {
  override readonly name = "StartupError";
}

const attempt = <A>(what: string, f: () => Promise<A> | A) =>
  Effect.tryPromise({
    try: async () => f(),
    catch: (e) => new StartupError(`${what}: ${e instanceof Error ? e.message : String(e)}`),
  });

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
        attempt("cannot use EventStoreDB", async () => {
          const store = new EsdbEventStore(url);
          await store.readAll({ maxCount: 1 }); // fail now, not on the first command
          logger.info({ url }, "using EventStoreDB");
          return store;
        }),
        (store) => Effect.promise(() => boundedStep("closing EventStoreDB", () => store.close(), { timeoutMs: STORE_CLOSE_TIMEOUT_MS, logger })),
      ),
    );
  }
  const file = join(config.DataDir, "shoal.db");
  return Layer.scoped(
    Store,
    Effect.acquireRelease(
      attempt("cannot open the event store", () => {
        const store = new SqliteEventStore(file);
        logger.info({ file }, "using the embedded SQLite event store");
        return store;
      }),
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
        connect({ servers: url, name: "shoal-orchestrator", maxReconnectAttempts: -1, reconnectTimeWait: 1000, ...STALE_AFTER }),
      ),
      (nc) => Effect.promise(() => closeNatsConnection(nc, logger)),
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
      return { nc, url: server.url, server };
    }),
  );
}
