import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ShoalConfig } from "../config/keys.ts";
import { writeFileAtomic } from "../fs/write-file-atomic.ts";
import { credentialsDir, loadOrCreateSecret, newSecret } from "../security/secret-file.ts";
import { EVENTS_READER_PERMISSIONS, EVENTS_READER_USER } from "../transport/nats-auth/nats-roles.ts";
import { credsFileText } from "../transport/nats-jwt/creds-file.ts";
import { newNkey, nkeyFromSeed } from "../transport/nats-jwt/nats-nkey.ts";
import { NatsOperator, loadOrCreateOperatorKeys, revocationsIn, shoalAccountKey } from "../transport/nats-jwt/nats-operator.ts";

export interface JoinToken {
  readonly token: string;
  /** Where a generated token is kept; undefined when it comes from Orchestrator.Auth.Token. */
  readonly file: string | undefined;
}

/** Orchestrator.Auth.Token, else a token generated on first start and kept under DataDir (as k3s does). */
export function resolveJoinToken(config: ShoalConfig): JoinToken {
  const configured = config["Orchestrator.Auth.Token"];
  if (configured !== "") return { token: configured, file: undefined };
  const file = join(credentialsDir(config.DataDir), "join-token");
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
  const key = nkeyFromSeed("user", loadOrCreateSecret(join(dir, "nats-events-reader.nk"), () => newNkey("user").seed).value);
  const file = join(dir, "nats-events-reader.creds");
  writeFileAtomic(file, credsFileText(operator.issueUser(key.publicKey, EVENTS_READER_USER, EVENTS_READER_PERMISSIONS), key.seed), 0o600);
  return file;
}

/**
 * The embedded nats-server's operator as its configuration under DataDir now stands (the
 * revocations the orchestrator last wrote), for tools that run beside the orchestrator, such as
 * `shoal leaf config`. Undefined if that server has never been configured.
 */
export function currentNatsOperator(config: ShoalConfig): NatsOperator | undefined {
  const configFile = join(config.DataDir, "nats", "nats-server.conf");
  if (!existsSync(configFile)) return undefined;
  const joinToken = resolveJoinToken(config);
  const keys = loadOrCreateOperatorKeys(credentialsDir(config.DataDir));
  const revocations = revocationsIn(readFileSync(configFile, "utf8"), keys.operatorSigner.publicKey, shoalAccountKey(joinToken.token).publicKey);
  return new NatsOperator(keys, { joinToken: joinToken.token, jetStreamDiskBytes: config["Orchestrator.NATS.JetStreamMaxStore"], revocations });
}
