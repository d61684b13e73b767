import { join } from "node:path";
import type { ShoalConfig } from "../config/keys.ts";
import { credentialsDir, loadOrCreateSecret, newSecret } from "../security/secret-file.ts";

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

/** The embedded nats-server's own logins, generated once: the orchestrator's and the event readers'. */
export function embeddedNatsPasswords(dataDir: string): { orchestratorPassword: string; readerPassword: string; readerPasswordFile: string } {
  const dir = credentialsDir(dataDir);
  const readerPasswordFile = join(dir, "nats-events-reader.password");
  return {
    orchestratorPassword: loadOrCreateSecret(join(dir, "nats-orchestrator.password"), () => newSecret("shoal-nats")).value,
    readerPassword: loadOrCreateSecret(readerPasswordFile, () => newSecret("shoal-nats")).value,
    readerPasswordFile,
  };
}
