import { Schema } from "effect";
import { DecimalInteger } from "../decimal-integer.ts";
import { QueryBool } from "../query-bool.ts";

/** The namespace a job's name is looked up in. */
export const Namespace = Schema.optional(Schema.String.pipe(Schema.maxLength(256)));
/** Bacalhau's job_version: 0 or absent means the current one. */
export const JobVersion = Schema.optional(DecimalInteger(0, 999_999_999_999));

/** The query of a read of one job's entries by version: Bacalhau's namespace, job_version and all_job_versions. */
export const JOB_VERSIONS_FIELDS = {
  namespace: Namespace,
  job_version: JobVersion,
  all_job_versions: Schema.optional(QueryBool),
};

export const LOOKUP_DESCRIPTIONS = {
  namespace:
    "Namespace the job's name is looked up in (default: default); IDs and ID prefixes match in every namespace",
  job_version: "The job's version (0 or absent: the current one)",
};
