import { join } from "node:path";
import type { AuthUser } from "../config/auth-users.ts";
import { credentialsDir, loadOrCreateSecret, newSecret } from "./secret-file.ts";

/** The identity the generated key is recorded as in the history. */
export const ADMIN_IDENTITY = "admin";

/** `<DataDir>/credentials/api-admin-key`: written by `serve` when API.Auth.Users is empty, read by the CLI. */
export const adminApiKeyPath = (dataDir: string): string => join(credentialsDir(dataDir), "api-admin-key");

/** The generated key (created on first call, 0600) as the one user of API.Auth.Users, with every capability. */
export function loadOrCreateAdminApiKey(dataDir: string): { path: string; created: boolean; user: AuthUser } {
  const path = adminApiKeyPath(dataDir);
  const { value, created } = loadOrCreateSecret(path, () => newSecret("shoal_api"));
  return { path, created, user: { Alias: ADMIN_IDENTITY, APIKey: value, Capabilities: [{ Actions: ["*"] }] } };
}
