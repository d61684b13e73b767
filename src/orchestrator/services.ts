import { join } from "node:path";
import { Context, Effect, Layer } from "effect";
import { existsSync, readFileSync } from "node:fs";
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from "nats";
import type { Logger } from "pino";
import type { ShoalConfig } from "../config/keys.ts";
import { SCHEMA_VERSIONS } from "../events/catalog/schema-versions.ts";
import { EsdbEventStore, kurrentStartFailure } from "../events/eventstoredb/esdb-event-store.ts";
import { SqliteEventStore } from "../events/sqlite/sqlite-event-store.ts";
import type { CheckpointStore, EventStore } from "../events/store/event-store.ts";
import { boundedStep } from "../lifecycle/bounded-step.ts";
import { redactUrl } from "../security/redact-url.ts";
import { natsServerUrls } from "../transport/nats-server-urls.ts";
import { closeNatsConnection } from "../transport/close-nats-connection.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../transport/embedded-nats-server.ts";
import { goRuntimeEnv } from "../transport/go-runtime-env.ts";
import { writeFileAtomic } from "../fs/write-file-atomic.ts";
import { credentialsDir } from "../security/secret-file.ts";
import {
  ORCHESTRATOR_INBOX_PREFIX,
  ORCHESTRATOR_PERMISSIONS,
  ORCHESTRATOR_USER,
  SYSTEM_INBOX_PREFIX,
} from "../transport/nats-auth/nats-roles.ts";
import { operatorModeServerConfig } from "../transport/nats-auth/nats-server-config.ts";
import { jwtLogin } from "../transport/nats-jwt/jwt-login.ts";
import { watchLeafServers } from "../transport/nats-jwt/leaf-account-sync.ts";
import { NatsJwtGate, type RevocationTarget } from "../transport/nats-jwt/nats-jwt-gate.ts";
import { jetStreamDiskOf } from "../transport/nats-jwt/nats-jwt.ts";
import { newNkey } from "../transport/nats-jwt/nats-nkey.ts";
import { lookupAccountJwt } from "../transport/nats-jwt/lookup-account-jwt.ts";
import { untilJetStreamAnswers } from "../transport/until-jetstream-answers.ts";
import type { Clock } from "../actors/clock.ts";
import type { DeadlineScheduler } from "../actors/deadline-scheduler.ts";
import {
  NatsOperator,
  loadOperatorKeys,
  loadOrCreateOperatorKeys,
  revocationsIn,
  shoalAccountKey,
} from "../transport/nats-jwt/nats-operator.ts";
import { resolveJoinToken, writeEventsReaderCreds, type JoinToken } from "./nats-credentials.ts";
import { embeddedNatsTls, externalNatsTls } from "./nats-tls.ts";
import { jetStreamBudget } from "./jetstream-budget.ts";
import {
  clientCertificateProblem,
  cutOffBeforeAnswer,
  natsTlsProblem,
  tlsConnectionOptions,
  type NatsClientTls,
} from "../transport/nats-tls.ts";
import { StartupError } from "../errors/startup-error.ts";

export { StartupError };

export class Store extends Context.Tag("shoal/Store")<Store, EventStore & CheckpointStore>() {}

// A stopped or wedged server keeps the socket open; pings notice it (a disconnect, so the node
// manager stops blaming nodes) within about three intervals. A ping every 2 s costs nothing.
const STALE_AFTER = { pingInterval: 2_000, maxPingOut: 2 };
const STORE_CLOSE_TIMEOUT_MS = 5_000;
const EVENTS_CONNECTION_NAME = "shoal-event-publisher";
const SYSTEM_CLOSE_TIMEOUT_MS = 500;

export interface NatsService {
  readonly nc: NatsConnection;
  /**
   * The event publisher's own connection. nats-server handles a JetStream call on the reading
   * goroutine of the connection that made it, so a stuck JetStream (a full disk) stalls that
   * connection: on `nc` it would stall the node protocol's replies, heartbeats included.
   */
  readonly eventsNc: NatsConnection;
  readonly url: string;
  readonly joinToken: JoinToken;
  /** The embedded server's per-node keys (JWT users); undefined on an external NATS, whose operator owns them. */
  readonly access: NatsJwtGate | undefined;
  /** The embedded server's event-reader credentials file (JWT and seed), for downstream systems. */
  readonly readerCredsFile: string | undefined;
  /** The supervised child, when Shoal runs its own. */
  readonly server?: EmbeddedNatsServer;
  /** Where the supervised child keeps its JetStream files. */
  readonly jetStreamDir?: string;
  /** The CA the embedded server's generated certificate chains to, which compute nodes and leaf servers trust. */
  readonly caPath?: string;
  /**
   * Has the embedded server read its certificate files again (replaced, or the generated one renewed when due);
   * false: it speaks plain NATS, or the NATS is external.
   */
  readonly reloadTls?: () => boolean;
  /**
   * For the generated certificate: a new one when it is due (near its end, or no longer covering the names), which
   * the server then serves; says why it was issued, or undefined when the kept one still does.
   */
  readonly renewTlsIfDue?: (now: Date) => string | undefined;
}
export class Nats extends Context.Tag("shoal/Nats")<Nats, NatsService>() {}

const attempt = <A>(what: string, f: () => Promise<A> | A) =>
  Effect.tryPromise({
    try: async () => f(),
    catch: (e) => new StartupError(`${what}: ${e instanceof Error ? e.message : String(e)}`),
  });

/** A connection to NATS over `tls`, a failed handshake said with its fix. */
const connectOverTls = (url: string, tls: NatsClientTls | undefined, options: ConnectionOptions) =>
  Effect.tryPromise({
    try: async () => {
      const servers = natsServerUrls(url);
      try {
        return await connect({ servers, ...options, ...tlsConnectionOptions(tls) });
      } catch (e) {
        throw (
          natsTlsProblem(e, redactUrl(url), tls) ??
          // Only a connection cut off before the server answered: a refused login says so itself.
          (cutOffBeforeAnswer(e) ? await clientCertificateProblem(servers, tls, redactUrl) : undefined) ??
          e
        );
      }
    },
    catch: (e) =>
      new StartupError(`cannot connect to NATS at ${redactUrl(url)}: ${e instanceof Error ? e.message : String(e)}`),
  });

/** Refuses a store that cannot take a write now (read-only, disk full, unreachable), closing it again. */
async function usable<S extends EventStore>(
  store: S,
  check: (store: S) => Promise<void> | void = () => undefined,
): Promise<S> {
  try {
    // First: a store this Shoal must not use (written by a newer one) gets no test write either.
    await check(store);
    await store.checkWritable();
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
    if (!/^(kurrentdb|kurrent|kdb|esdb)(\+discover)?:\/\//.test(url)) {
      return Layer.fail(
        new StartupError(
          "EventStore.URL must start with kurrentdb:// or kurrentdb+discover:// (esdb:// still works), " +
            `got ${redactUrl(url)}`,
        ),
      );
    }
    return Layer.scoped(
      Store,
      Effect.acquireRelease(
        attempt("cannot use KurrentDB", async () => {
          try {
            return await usable(await EsdbEventStore.open(url), async (store) => {
              await store.readAll({ maxCount: 1 }); // fail now, not on the first command (reads: the native bridge)
              logger.info({ url: redactUrl(url) }, "using KurrentDB");
            });
          } catch (e) {
            throw await kurrentStartFailure(e, url);
          }
        }),
        (store) =>
          Effect.promise(() =>
            boundedStep("closing KurrentDB", () => store.close(), { timeoutMs: STORE_CLOSE_TIMEOUT_MS, logger }),
          ),
      ),
    );
  }
  const file = join(config.DataDir, "shoal.db");
  return Layer.scoped(
    Store,
    Effect.acquireRelease(
      attempt("cannot use the event store", () =>
        usable(
          new SqliteEventStore(file, {
            logger,
            writerThread: config["EventStore.SQLite.WriterThread"],
            ...(config["EventStore.SQLite.ReadAhead"] ? {} : { readAheadFrom: Number.POSITIVE_INFINITY }),
          }),
          (store) => {
            // A downgrade: refused, naming the event, rather than read as if it were current.
            store.refuseNewerEvents(SCHEMA_VERSIONS);
            logger.info(
              {
                file,
                writerThread: config["EventStore.SQLite.WriterThread"],
                readAhead: config["EventStore.SQLite.ReadAhead"],
              },
              "using the embedded SQLite event store",
            );
          },
        ),
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
  if (given > 1)
    throw new StartupError(
      "set only one of Orchestrator.NATS.User, Orchestrator.NATS.Token and Orchestrator.NATS.CredsFile",
    );
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

/** A fresh key and JWT at each start: nothing of the orchestrator's own login is kept on disk. */
function orchestratorLogin(operator: NatsOperator): Partial<ConnectionOptions> {
  const self = newNkey("user");
  return {
    authenticator: jwtLogin(operator.issueUser(self.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS), self),
    inboxPrefix: ORCHESTRATOR_INBOX_PREFIX,
  };
}

/**
 * An external NATS when Orchestrator.NATS.URL is set, else a nats-server child on
 * Orchestrator.Port that admits no anonymous client: it starts from a config generated under
 * DataDir with the orchestrator's, the join token's and the event readers' logins.
 */
export function natsLayer(
  config: ShoalConfig,
  logger: Logger,
  pauses: { readonly clock: Clock; readonly deadlines: DeadlineScheduler },
): Layer.Layer<Nats, StartupError> {
  const external = config["Orchestrator.NATS.URL"];
  const connectTo = (
    url: string,
    tls: NatsClientTls | undefined,
    auth: Partial<ConnectionOptions>,
    name = "shoal-orchestrator",
  ) =>
    Effect.acquireRelease(
      connectOverTls(url, tls, { name, maxReconnectAttempts: -1, reconnectTimeWait: 1000, ...auth, ...STALE_AFTER }),
      (nc) =>
        Effect.promise(async () => {
          // The publisher has flushed (or given up) by now: nothing of its connection's is left to drain.
          if (name === EVENTS_CONNECTION_NAME)
            await boundedStep("closing the event publisher's NATS connection", () => nc.close(), {
              timeoutMs: SYSTEM_CLOSE_TIMEOUT_MS,
              logger,
            });
          else await closeNatsConnection(nc, logger);
        }),
    );
  // The system account's connection, only to push account updates (revocations) to the running servers.
  // Nothing to drain (it only sends requests): closed outright, so a wedged server costs no drain timeout.
  const connectSystem = (url: string, tls: NatsClientTls | undefined, operator: NatsOperator) =>
    Effect.acquireRelease(
      connectOverTls(url, tls, {
        name: "shoal-account-updates",
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1000,
        authenticator: operator.systemLogin(),
        inboxPrefix: SYSTEM_INBOX_PREFIX,
        ...STALE_AFTER,
      }),
      (system) =>
        Effect.promise(() =>
          boundedStep("closing the NATS system-account connection", () => system.close(), {
            timeoutMs: SYSTEM_CLOSE_TIMEOUT_MS,
            logger,
          }),
        ),
    );
  const operatorDir = config["Orchestrator.NATS.OperatorDir"];
  if (operatorDir !== "" && external === "") {
    return Layer.fail(
      new StartupError(
        "Orchestrator.NATS.OperatorDir is for an external NATS (Orchestrator.NATS.URL): the embedded nats-server " +
          "keeps its operator keys under DataDir/credentials",
      ),
    );
  }
  if (operatorDir !== "") {
    // An external NATS with Shoal as its operator: logins are JWTs this orchestrator issues, as on its own server.
    return Layer.scoped(
      Nats,
      Effect.gen(function* () {
        const { operator, joinToken, tls } = yield* Effect.try({
          try: () => {
            if (Object.keys(externalAuth(config)).length > 0)
              throw new StartupError(
                "with Orchestrator.NATS.OperatorDir the orchestrator issues its own NATS login: " +
                  "unset Orchestrator.NATS.User, Token and CredsFile",
              );
            const joinToken = resolveJoinToken(config);
            const operator = new NatsOperator(loadOperatorKeys(operatorDir), {
              joinToken: joinToken.token,
              jetStreamDiskBytes: jetStreamBudget(config).accountDiskBytes,
            });
            return { operator, joinToken, tls: externalNatsTls(config) };
          },
          catch: (e) =>
            e instanceof StartupError
              ? e
              : new StartupError(`cannot use the NATS operator keys in ${operatorDir}: ${(e as Error).message}`),
        });
        const system = yield* connectSystem(external, tls, operator);
        // A cluster electing its leaders may leave the lookup unanswered a while: told apart from an unknown account.
        const current = yield* attempt("cannot read the Shoal account from NATS", () =>
          untilJetStreamAnswers("reading the Shoal account", () => lookupAccountJwt(system, operator), {
            ...pauses,
            logger,
            who: "NATS",
          }),
        );
        if (current === undefined)
          return yield* Effect.fail(
            new StartupError(
              `the NATS servers at ${redactUrl(external)} do not know this join token's account ${operator.account}: ` +
                "configure them with the nats-operator.conf `shoal nats-operator` wrote with this " +
                "Orchestrator.Auth.Token and these keys (docs/security.md)",
            ),
          );
        // Revocations any orchestrator of this account pushed stay in force in the JWTs signed here.
        operator.keepRevocationsIn(current);
        const nc = yield* connectTo(external, tls, orchestratorLogin(operator));
        const eventsNc = yield* connectTo(external, tls, orchestratorLogin(operator), EVENTS_CONNECTION_NAME);
        // The resolver keeps what is pushed: no configuration to write.
        const target: RevocationTarget = { writeConfig: () => undefined, system, sharedResolver: true };
        const access = new NatsJwtGate(operator, target, logger.child({ component: "nats-access" }));
        // The servers take the account `shoal nats-operator` preloads only while they hold none: an account signed for
        // another JetStream budget (another JetStreamMaxStore or Replicas, an earlier version) is brought to this one
        // before anything makes a stream in it.
        const held = jetStreamDiskOf(current);
        const wanted = jetStreamBudget(config).accountDiskBytes;
        if (held !== wanted) {
          logger.info({ account: operator.account, held, wanted }, "setting the Shoal account's JetStream disk limit");
          yield* attempt("cannot set the Shoal account's JetStream disk limit on NATS", () => access.republish());
        }
        return {
          nc,
          eventsNc,
          url: external,
          joinToken,
          access,
          readerCredsFile: writeEventsReaderCreds(config.DataDir, operator),
        };
      }),
    );
  }
  if (external !== "") {
    return Layer.scoped(
      Nats,
      Effect.gen(function* () {
        const { auth, tls } = yield* Effect.try({
          try: () => ({ auth: externalAuth(config), tls: externalNatsTls(config) }),
          catch: (e) => (e instanceof StartupError ? e : new StartupError(String(e))),
        });
        const joinToken = yield* attempt("cannot keep the join token", () => resolveJoinToken(config));
        const nc = yield* connectTo(external, tls, auth);
        const eventsNc = yield* connectTo(external, tls, auth, EVENTS_CONNECTION_NAME);
        return { nc, eventsNc, url: external, joinToken, access: undefined, readerCredsFile: undefined };
      }),
    );
  }
  return Layer.scoped(
    Nats,
    Effect.gen(function* () {
      const dir = join(config.DataDir, "nats");
      const configFile = join(dir, "nats-server.conf");
      const target: { -readonly [K in keyof RevocationTarget]: RevocationTarget[K] } = {
        writeConfig: () => undefined,
        system: undefined,
      };
      if (
        config["Orchestrator.NATS.LeafNodes.Port"] !== 0 &&
        config["Orchestrator.NATS.LeafNodes.Port"] === config["Orchestrator.Port"]
      ) {
        return yield* Effect.fail(
          new StartupError(
            "Orchestrator.NATS.LeafNodes.Port must differ from Orchestrator.Port (nodes and leaf servers connect to different ports)",
          ),
        );
      }
      const tls = yield* Effect.try({
        try: () => embeddedNatsTls(config, logger, new Date()),
        catch: (e) => (e instanceof StartupError ? e : new StartupError(String(e))),
      });
      const { joinToken, operator, readerCredsFile, access } = yield* attempt(
        "cannot prepare the embedded NATS server's credentials",
        async () => {
          const joinToken = resolveJoinToken(config);
          const keys = loadOrCreateOperatorKeys(credentialsDir(config.DataDir));
          const account = shoalAccountKey(joinToken.token).publicKey;
          // Revocations the last run wrote stay in force (the store may add some: NodeManager.revokedCredentials).
          const revocations = existsSync(configFile)
            ? revocationsIn(readFileSync(configFile, "utf8"), keys.operatorSigner.publicKey, account)
            : new Map<string, number>();
          const operator = new NatsOperator(keys, {
            joinToken: joinToken.token,
            jetStreamDiskBytes: jetStreamBudget(config).accountDiskBytes,
            revocations,
          });
          const port = config["Orchestrator.Port"];
          const settings = {
            host: config["Orchestrator.Host"],
            port,
            serverName: `shoal-${port}`,
            ...embeddedNatsPaths(dir),
            maxFileStoreBytes: config["Orchestrator.NATS.JetStreamMaxStore"],
            leafNodePort: config["Orchestrator.NATS.LeafNodes.Port"],
            ...(tls === undefined ? {} : { tls: { certFile: tls.certFile, keyFile: tls.keyFile } }),
          };
          target.writeConfig = () =>
            writeFileAtomic(configFile, `${operatorModeServerConfig(settings, operator.serverConfig())}\n`, 0o600);
          target.writeConfig();
          const readerCredsFile = writeEventsReaderCreds(config.DataDir, operator);
          return {
            joinToken,
            operator,
            readerCredsFile,
            access: new NatsJwtGate(operator, target, logger.child({ component: "nats-access" })),
          };
        },
      );
      const server = yield* Effect.acquireRelease(
        attempt("cannot start the embedded NATS server", () =>
          EmbeddedNatsServer.start({
            host: config["Orchestrator.Host"],
            port: config["Orchestrator.Port"],
            dir,
            logger,
            configFile,
            env: goRuntimeEnv(config["Orchestrator.NATS.GOGC"], config["Orchestrator.NATS.GOMEMLIMIT"]),
          }),
        ),
        (s) => Effect.promise(() => s.stop()),
      );
      const nc = yield* connectTo(server.url, tls?.client, orchestratorLogin(operator));
      const eventsNc = yield* connectTo(server.url, tls?.client, orchestratorLogin(operator), EVENTS_CONNECTION_NAME);
      target.system = yield* connectSystem(server.url, tls?.client, operator);
      if (config["Orchestrator.NATS.LeafNodes.Port"] > 0) {
        const system = target.system;
        yield* Effect.acquireRelease(
          Effect.sync(() =>
            watchLeafServers(system, operator, access, logger.child({ component: "nats-leaf-servers" })),
          ),
          (stop) => Effect.sync(stop),
        );
        logger.info(
          { port: config["Orchestrator.NATS.LeafNodes.Port"] },
          "the embedded nats-server accepts leaf servers",
        );
      }
      return {
        nc,
        eventsNc,
        url: server.url,
        server,
        jetStreamDir: embeddedNatsPaths(dir).storeDir,
        ...(tls?.caPath === undefined ? {} : { caPath: tls.caPath }),
        ...(tls === undefined
          ? {}
          : {
              renewTlsIfDue: (now: Date) => {
                const issued = tls.renewIfDue(now);
                if (issued === undefined) return undefined;
                logger.info(
                  { reason: issued },
                  "issued the embedded nats-server a new certificate from the generated CA",
                );
                // nats-server re-reads its TLS files on a reload: new connections get the new certificate.
                server.reload();
                return issued;
              },
            }),
        reloadTls: () => {
          if (tls === undefined) return false;
          const issued = tls.renewIfDue(new Date());
          if (issued !== undefined)
            logger.info({ reason: issued }, "issued the embedded nats-server a new certificate from the generated CA");
          server.reload();
          return true;
        },
        joinToken,
        access,
        readerCredsFile,
      };
    }),
  );
}
