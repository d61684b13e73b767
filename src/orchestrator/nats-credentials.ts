import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ShoalConfig } from "../config/keys.ts";
import { writeFileAtomic } from "../fs/write-file-atomic.ts";
import { StartupError } from "../errors/startup-error.ts";
import { SecretFileError, credentialsDir, loadOrCreateSecret, newSecret, readSecret } from "../security/secret-file.ts";
import { EVENTS_READER_PERMISSIONS, EVENTS_READER_USER } from "../transport/nats-auth/nats-roles.ts";
import { credsFileText } from "../transport/nats-jwt/creds-file.ts";
import { newNkey, nkeyFromSeed } from "../transport/nats-jwt/nats-nkey.ts";
import { jetStreamBudget } from "./jetstream-budget.ts";
import {
  NatsOperator,
  loadOperatorKeys,
  preloadedAccountJwt,
  revocationsIn,
  shoalAccountKey,
} from "../transport/nats-jwt/nats-operator.ts";

export interface JoinToken {
  readonly token: string;
  /** Where a generated token is kept; undefined when it comes from Orchestrator.Auth.Token. */
  readonly file: string | undefined;
}

/** Where a generated join token is kept. */
const joinTokenFile = (dataDir: string): string => join(credentialsDir(dataDir), "join-token");

/** Orchestrator.Auth.Token, else a token generated on first start and kept under DataDir (as k3s does). */
export function resolveJoinToken(config: ShoalConfig): JoinToken {
  const configured = config["Orchestrator.Auth.Token"];
  if (configured !== "") return { token: configured, file: undefined };
  const file = joinTokenFile(config.DataDir);
  return { token: loadOrCreateSecret(file, () => newSecret("shoal-join")).value, file };
}

/**
 * The event readers' login on the embedded nats-server: a NATS credentials file (their key's
 * seed and a JWT with the reader permissions), 0600 under DataDir/credentials. The key is made
 * once; the JWT is issued again at each start, so it always names the account of the current
 * join token.
 */
export function writeEventsReaderCreds(dataDir: string, operator: NatsOperator): string {
  const dir = credentialsDir(dataDir);
  const key = nkeyFromSeed(
    "user",
    loadOrCreateSecret(join(dir, "nats-events-reader.nk"), () => newNkey("user").seed).value,
  );
  const file = join(dir, "nats-events-reader.creds");
  writeFileAtomic(
    file,
    credsFileText(operator.issueUser(key.publicKey, EVENTS_READER_USER, EVENTS_READER_PERMISSIONS), key.seed),
    0o600,
  );
  return file;
}

/**
 * The embedded nats-server's operator as its configuration under DataDir now stands (the
 * revocations the orchestrator last wrote), for tools that run beside the orchestrator, such as
 * `shoal leaf config`. Undefined if that server has never been configured. It only reads: a
 * missing key or join token is an error, not made anew, and a join token other than the one the
 * server was configured with (Orchestrator.Auth.Token not given as the orchestrator has it) is
 * refused, since what it derives would be another account, which the server refuses.
 */
export function currentNatsOperator(config: ShoalConfig): NatsOperator | undefined {
  const configFile = join(config.DataDir, "nats", "nats-server.conf");
  if (!existsSync(configFile)) return undefined;
  const dir = credentialsDir(config.DataDir);
  let token: string;
  let keys: ReturnType<typeof loadOperatorKeys>;
  try {
    token =
      config["Orchestrator.Auth.Token"] !== ""
        ? config["Orchestrator.Auth.Token"]
        : readSecret(joinTokenFile(config.DataDir));
    keys = loadOperatorKeys(dir);
  } catch (e) {
    if (!(e instanceof SecretFileError)) throw e;
    throw new StartupError(`${e.message} (the orchestrator's NATS credentials under ${dir} are read, never made here)`);
  }
  const serverConfig = readFileSync(configFile, "utf8");
  const account = shoalAccountKey(token).publicKey;
  if (preloadedAccountJwt(serverConfig, account) === undefined) {
    throw new StartupError(
      `the join token differs from the one ${configFile} was written with: give the orchestrator's Orchestrator.Auth.Token (its --config file, or -c Orchestrator.Auth.Token=…)`,
    );
  }
  const revocations = revocationsIn(serverConfig, keys.operatorSigner.publicKey, account);
  return new NatsOperator(keys, {
    joinToken: token,
    jetStreamDiskBytes: jetStreamBudget(config).accountDiskBytes,
    revocations,
  });
}
