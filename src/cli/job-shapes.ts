// The API's job shapes, as types only: the CLI never loads the schemas (Effect) they come from.
import type { ExecutionJson, JobHistoryJson as JobHistorySchema, JobJson } from "../api/jobs/job-json.ts";

export type { ExecutionJson, JobJson };
export type JobHistoryJson = typeof JobHistorySchema.Type;
