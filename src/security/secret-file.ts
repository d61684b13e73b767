import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../fs/write-file-atomic.ts";

export class SecretFileError extends Error {
  override readonly name = "SecretFileError";
}

/** Where generated credentials live: `<DataDir>/credentials`, readable by the owner only. */
export const credentialsDir = (dataDir: string): string => join(dataDir, "credentials");

/** A fresh random secret: `<prefix>_` and 32 bytes in base64url (43 characters). */
export const newSecret = (prefix: string): string => `${prefix}_${randomBytes(32).toString("base64url")}`;

/**
 * Reads a generated secret, or creates it once (0600, in a 0700 directory). An existing file
 * that is empty or unreadable is an error, never silently replaced: whoever holds the old secret
 * would be locked out without being told.
 */
export function loadOrCreateSecret(path: string, generate: () => string): { value: string; created: boolean } {
  if (existsSync(path)) return { value: readSecret(path), created: false };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  chmodSync(dirname(path), 0o700);
  const value = generate();
  writeFileAtomic(path, `${value}\n`, 0o600);
  return { value, created: true };
}

export function readSecret(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new SecretFileError(`cannot read ${path}: ${(e as Error).message}`);
  }
  const value = text.trim();
  if (value === "" || /\s/.test(value))
    throw new SecretFileError(`${path} is empty or malformed; remove it to generate a new one`);
  return value;
}
