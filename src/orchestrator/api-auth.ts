import { existsSync } from "node:fs";
import type { Logger } from "pino";
import type { ApiAuth } from "../api/auth/register-auth.ts";
import type { ShoalConfig } from "../config/keys.ts";
import { adminApiKeyPath, loadOrCreateAdminApiKey } from "../security/admin-api-key.ts";
import { SecretFileError } from "../security/secret-file.ts";
import { StartupError } from "./services.ts";

export interface ResolvedApiAuth {
  readonly auth: ApiAuth;
  /** Set when the API runs on the generated admin key (no API.Auth.Users configured). */
  readonly adminKey?: { readonly path: string; readonly created: boolean };
}

/**
 * Secure by default: with no API.Auth.Users, the API accepts exactly one generated admin key,
 * created once under DataDir. The key itself is never logged, only where it is.
 */
export function resolveApiAuth(config: ShoalConfig, logger: Logger): ResolvedApiAuth {
  const anonymousAccess = config["API.Auth.AnonymousAccess"];
  const users = config["API.Auth.Users"];
  if (users.length > 0) {
    const stale = adminApiKeyPath(config.DataDir);
    if (existsSync(stale))
      logger.info(
        { file: stale },
        "API.Auth.Users is set, so the generated admin API key in this file is not accepted",
      );
    logger.info({ users: users.length, anonymousAccess }, "REST API users from API.Auth.Users");
    return { auth: { users, anonymousAccess } };
  }
  let admin: ReturnType<typeof loadOrCreateAdminApiKey>;
  try {
    admin = loadOrCreateAdminApiKey(config.DataDir);
  } catch (e) {
    if (e instanceof SecretFileError) throw new StartupError(`cannot use the generated admin API key: ${e.message}`);
    throw new StartupError(`cannot create the admin API key under ${config.DataDir}: ${(e as Error).message}`);
  }
  if (config["Orchestrator.Cluster.Enabled"])
    // Each orchestrator generates its own: a client would have to know which one it is talking to.
    logger.warn(
      { file: admin.path },
      "cluster mode with API.Auth.Users empty: this orchestrator's generated admin API key works on it alone; " +
        "give every orchestrator the same API.Auth.Users so that a client may use any of them",
    );
  logger.info(
    { file: admin.path, anonymousAccess },
    admin.created
      ? "generated an admin API key (API.Auth.Users is empty)"
      : "using the generated admin API key (API.Auth.Users is empty)",
  );
  return { auth: { users: [admin.user], anonymousAccess }, adminKey: { path: admin.path, created: admin.created } };
}
