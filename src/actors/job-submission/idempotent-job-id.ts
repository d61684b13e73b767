import { jobIdOf } from "../../../machines/job/job-id.ts";
import { uuidOfHash } from "./uuid-of-hash.ts";

/**
 * The job a submitter's IdempotencyToken names: the same submitter and token always give the same
 * id, so a retried submission finds the job the first one stored (its stream) instead of storing a
 * second. Scoped by the authenticated submitter, so one user's token never reaches another's job.
 */
export function idempotentJobId(submitter: string, token: string): string {
  return jobIdOf(uuidOfHash(submitter, token));
}
