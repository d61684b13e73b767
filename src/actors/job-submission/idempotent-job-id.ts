import { createHash } from "node:crypto";
import { jobIdOf } from "../../../machines/job/job-id.ts";

/**
 * The job a submitter's IdempotencyToken names: the same submitter and token always give the same
 * id, so a retried submission finds the job the first one stored (its stream) instead of storing a
 * second. Scoped by the authenticated submitter, so one user's token never reaches another's job.
 * A UUID of version 8 (RFC 9562: its bits are the application's), from SHA-256.
 */
export function idempotentJobId(submitter: string, token: string): string {
  const hash = createHash("sha256").update(submitter).update("\0").update(token).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x80;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return jobIdOf(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
}
