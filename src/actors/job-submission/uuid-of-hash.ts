import { createHash } from "node:crypto";

/**
 * A UUID of version 8 (RFC 9562: its bits are the application's) from the SHA-256 of `parts`
 * (joined with NUL, which no part can hold in a meaningful way): equal parts, equal UUIDs.
 */
export function uuidOfHash(...parts: readonly string[]): string {
  const hash = createHash("sha256").update(parts.join("\0")).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x80;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
