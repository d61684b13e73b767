import { join } from "node:path";
import { Context, Effect, Layer } from "effect";
import { readFileSync } from "node:fs";
import { Empty, connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from "nats";
import type { Logger } from "pino";
import type { ShoalConfig } from "../config/keys.ts";
import { EsdbEventStore } from "../events/eventstoredb/esdb-event-store.ts";
import { SqliteEventStore } from "../events/sqlite/sqlite-event-store.ts";
import type { CheckpointStore, EventStore } from "../events/store/event-store.ts";
import { boundedStep } from "../lifecycle/bounded-step.ts";
import { redactUrl } from "../security/redact-url.ts";
import { closeNatsConnection } from "../transport/close-nats-connection.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../transport/embedded-nats-server.ts";
import { NatsAccess } from "../transport/nats-auth/nats-access.ts";
import { ORCHESTRATOR_INBOX_PREFIX, ORCHESTRATOR_USER } from "../transport/nats-auth/nats-roles.ts";
import { embeddedNatsPasswords, resolveJoinToken, type JoinToken } from "./nats-credentials.ts";
import { StartupError } from "../errors/startup-error.ts";

export { StartupError };

export class Store extends Context.Tag("shoal/Store")<Store, EventStore & CheckpointStore>() {}

// A stopped or wedged server keeps the socket open; pings notice it (a disconnect, so the node
// manager stops blaming nodes) within about three intervals. A ping every 2 s costs nothing.
const STALE_AFTER = { pingInterval: 2_000, maxPingOut: 2 };
const STORE_CLOSE_TIMEOUT_MS = 5_000;

export interface NatsService {
  readonly nc: NatsConnection;
  readonly url: string;
  readonly joinToken: JoinToken;
  /** The embedded server's logins and per-node keys; undefined on an external NATS, whose operator owns them. */
  readonly access: NatsAccess | undefined;
  /** The embedded server's event-reader password file, for downstream systems. */
  readonly readerPasswordFile: string | undefined;
  /** The supervised child, when Shoal runs its own. */
  readonly server?: EmbeddedNatsServer;
}
export class Nats extends Context.Tag("shoal/Nats")<Nats, NatsService>() {}

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
      return Layer.fail(new StartupError(`EventStore.URL must start with esdb:// or esdb+discover://, got ${redactUrl(url)}`));
    }
    return Layer.scoped(
      Store,
      Effect.acquireRelease(
        attempt("cannot use EventStoreDB", () =>
          usable(new EsdbEventStore(url), async (store) => {
            await store.readAll({ maxCount: 1 }); // fail now, not on the first command
            logger.info({ url: redactUrl(url) }, "using EventStoreDB");
          }),
        ),
        (store) => Effect.promise(() => boundedStep("closing EventStoreDB", () => store.close(), { timeoutMs: STORE_CLOSE_TIMEOUT_MS, logger })),
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

/** How the orchestrator logs in to an external NATS (Orchestrator.NATS.User/Password, Token or CredsFile). */
function externalAuth(config: ShoalConfig): Partial<ConnectionOptions> {
  const user = config["Orchestrator.NATS.User"];
  const token = config["Orchestrator.NATS.Token"];
  const credsFile = config["Orchestrator.NATS.CredsFile"];
  const given = [user !== "", token !== "", credsFile !== ""].filter(Boolean).length;
  if (given > 1) throw new StartupError("set only one of Orchestrator.NATS.User, Orchestrator.NATS.Token and Orchestrator.NATS.CredsFile");
  if (user !== "") return { user, pass: config["Orchestrator.NATS.Password"] };
  if (token !== "") return { token };
  if (credsFile !== "") {
    try {
      return { authenticator: credsAuthenticator(readFileSync(credsFile)) };
    } catch (e) {
      throw new StartupError(`cannot read Orchestrator.NATS.CredsFile ${credsFile}: ${(e as Error).message}`);
    }
  }
  return {};
}

/**
 * An external NATS when Orchestrator.NATS.URL is set, else a nats-server child on
 * Orchestrator.Port that admits no anonymous client: it starts from a config generated under
 * DataDir with the orchestrator's, the join token's and the event readers' logins.
 */
export function natsLayer(config: ShoalConfig, logger: Logger): Layer.Layer<Nats, StartupError> {
  const external = config["Orchestrator.NATS.URL"];
  const connectTo = (url: string, auth: Partial<ConnectionOptions>) =>
    Effect.acquireRelease(
      attempt(`cannot connect to NATS at ${redactUrl(url)}`, () =>
        connect({ servers: url, name: "shoal-orchestrator", maxReconnectAttempts: -1, reconnectTimeWait: 1000, ...auth, ...STALE_AFTER }),
      ),
      (nc) => Effect.promise(() => closeNatsConnection(nc, logger)),
    );
  if (external !== "") {
    return Layer.scoped(
      Nats,
      Effect.gen(function* () {
        const auth = yield* Effect.try({ try: () => externalAuth(config), catch: (e) => (e instanceof StartupError ? e : new StartupError(String(e))) });
        const joinToken = yield* attempt("cannot keep the join token", () => resolveJoinToken(config));
        const nc = yield* connectTo(external, auth);
        return { nc, url: external, joinToken, access: undefined, readerPasswordFile: undefined };
      }),
    );
  }
  return Layer.scoped(
    Nats,
    Effect.gen(function* () {
      const dir = join(config.DataDir, "nats");
      const { joinToken, passwords, access } = yield* attempt("cannot prepare the embedded NATS server's credentials", async () => {
        const joinToken = resolveJoinToken(config);
        const passwords = embeddedNatsPasswords(config.DataDir);
        const port = config["Orchestrator.Port"];
        const access = NatsAccess.create(
          join(dir, "nats-server.conf"),
          {
            host: config["Orchestrator.Host"],
            port,
            serverName: `shoal-${port}`,
            ...embeddedNatsPaths(dir),
            maxFileStoreBytes: config["Orchestrator.NATS.JetStreamMaxStore"],
          },
          { orchestratorPassword: passwords.orchestratorPassword, joinToken: joinToken.token, readerPassword: passwords.readerPassword },
          logger.child({ component: "nats-access" }),
        );
        // Until the store is recovered, the keys the last run admitted (from this same file) stay in.
        access.write();
        return { joinToken, passwords, access };
      });
      const server = yield* Effect.acquireRelease(
        attempt("cannot start the embedded NATS server", () =>
          EmbeddedNatsServer.start({ host: config["Orchestrator.Host"], port: config["Orchestrator.Port"], dir, logger, configFile: access.file }),
        ),
        (s) => Effect.promise(() => s.stop()),
      );
      const nc = yield* connectTo(server.url, { user: ORCHESTRATOR_USER, pass: passwords.orchestratorPassword, inboxPrefix: ORCHESTRATOR_INBOX_PREFIX });
      access.attach({
        url: server.url,
        reload: () => server.reload(),
        jetStreamAnswers: async () => void (await nc.request("$JS.API.INFO", Empty, { timeout: 1000 })),
      });
      return { nc, url: server.url, server, joinToken, access, readerPasswordFile: passwords.readerPasswordFile };
    }),
  );
}
