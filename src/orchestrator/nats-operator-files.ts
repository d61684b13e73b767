import { dirname, join, resolve } from "node:path";
import type { ShoalConfig } from "../config/keys.ts";
import { writeFileAtomic } from "../fs/write-file-atomic.ts";
import { privateDirectory } from "../fs/private-directory.ts";
import { NatsOperator, loadOrCreateOperatorKeys } from "../transport/nats-jwt/nats-operator.ts";
import { jetStreamBudget } from "./jetstream-budget.ts";
import { resolveJoinToken } from "./nats-credentials.ts";

export interface NatsOperatorFiles {
  /** The directory of the operator keys: Orchestrator.NATS.OperatorDir, copied to every orchestrator. */
  readonly keysDir: string;
  /** The servers' part: operator, system account, full resolver, accounts' JWTs; outside `keysDir` unless told. */
  readonly configFile: string;
  /** The Shoal account (derived from the join token), which the servers must know. */
  readonly account: string;
  /** Where the join token was generated, when Orchestrator.Auth.Token is not set: the orchestrators need that one. */
  readonly tokenFile?: string;
  /** `keysDir`'s mode before it was made 0700, if it existed with another. */
  readonly dirModeWas?: number;
}

export const OPERATOR_CONFIG_FILE = "nats-operator.conf";

/**
 * Shoal as the operator of an external NATS cluster: the operator keys in `dir` (made once, 0600, kept on later runs)
 * and the configuration every server of the cluster includes, at `configOut` (by default nats-operator.conf beside
 * `dir`: the servers' user reads it without any access to the keys). The Shoal account is the join token's
 * (Orchestrator.Auth.Token, or the one generated under DataDir), so the orchestrators must use that token.
 */
export function writeNatsOperatorFiles(
  config: ShoalConfig,
  dir: string,
  resolverDir: string,
  configOut?: string,
): NatsOperatorFiles {
  const keysDir = resolve(dir);
  const dirModeWas = privateDirectory(keysDir, "--dir", "shoal-nats-operator");
  const joinToken = resolveJoinToken(config);
  const operator = new NatsOperator(loadOrCreateOperatorKeys(keysDir), {
    joinToken: joinToken.token,
    jetStreamDiskBytes: jetStreamBudget(config).accountDiskBytes,
  });
  const configFile = resolve(configOut ?? join(dirname(keysDir), OPERATOR_CONFIG_FILE));
  // JWTs only (public: no key's secret half), readable by the NATS servers' user.
  // Top-level settings, no enclosing braces: a fragment a server's configuration includes.
  const settings = Object.entries(operator.clusterConfig(resolverDir)).map(
    ([key, value]) => `${key}: ${JSON.stringify(value, null, 1)}\n`,
  );
  writeFileAtomic(configFile, settings.join(""), 0o644);
  return {
    keysDir,
    configFile,
    account: operator.account,
    ...(joinToken.file === undefined ? {} : { tokenFile: joinToken.file }),
    ...(dirModeWas === undefined ? {} : { dirModeWas }),
  };
}
