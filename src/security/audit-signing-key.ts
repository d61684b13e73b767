import { join } from "node:path";
import { auditSigningKey, type AuditSigningKey } from "../events/chain/audit-checkpoint.ts";
import { credentialsDir, loadOrCreateSecret, newSecret, SecretFileError } from "./secret-file.ts";

const PREFIX = "shoal-audit_";

/** The orchestrator's audit key: `<DataDir>/credentials/audit.key`, beside the other credentials. */
export const auditKeyPath = (dataDir: string): string => join(credentialsDir(dataDir), "audit.key");

/**
 * The ed25519 key the orchestrator signs audit checkpoints with, created once (0600): its 32-byte
 * seed in base64url after `shoal-audit_`. It is the audit's own key, not one of the NATS keys, so
 * rotating one leaves the other alone.
 */
export function loadOrCreateAuditKey(dataDir: string): { key: AuditSigningKey; created: boolean; path: string } {
  const path = auditKeyPath(dataDir);
  const { value, created } = loadOrCreateSecret(path, () => newSecret("shoal-audit"));
  const seed = value.startsWith(PREFIX) ? Buffer.from(value.slice(PREFIX.length), "base64url") : undefined;
  if (seed === undefined || seed.length !== 32)
    throw new SecretFileError(`${path} is not an audit signing key (shoal-audit_ and 32 bytes in base64url)`);
  return { key: auditSigningKey(seed), created, path };
}
