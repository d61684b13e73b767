import { createHash } from "node:crypto";

/**
 * A UUID (version 5 layout, SHA-1 of a namespace and parts) that is the same every time for the
 * same inputs: what a workflow records and issues for one input event, and the executions a
 * placement creates, never change on replay. These ids are stored: the function must never change.
 */
export function deterministicId(namespace: string, ...parts: readonly string[]): string {
  const hash = createHash("sha1").update(namespace);
  for (const part of parts) hash.update("\0").update(part);
  const b = hash.digest();
  b[6] = ((b[6] as number) & 0x0f) | 0x50;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
