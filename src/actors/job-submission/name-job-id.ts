import { jobIdOf } from "../../../machines/job/job-id.ts";
import { uuidOfHash } from "./uuid-of-hash.ts";

/**
 * The job a name stands for in its namespace: the same name always gives the same id, so the
 * job's own stream is what makes a name unique (Bacalhau ≥ 1.8 updates the job a name already
 * has): two first submissions of one name meet on that stream under its expected revision, and
 * the second is an update.
 */
export const nameJobId = (namespace: string, name: string): string => jobIdOf(uuidOfHash("name", namespace, name));
