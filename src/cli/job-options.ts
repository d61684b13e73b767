import { API_OPTIONS } from "./api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "./config-flags.ts";

/** The options of the commands that submit a job (job run, job rerun, docker run): they show progress, no format. */
export const JOB_SUBMIT_OPTIONS = {
  ...CONFIG_OPTIONS,
  ...API_OPTIONS,
  help: { type: "boolean", short: "h" },
} as const;

/** The options every other `shoal job …` command takes. */
export const JOB_COMMON_OPTIONS = {
  ...JOB_SUBMIT_OPTIONS,
  output: { type: "string" },
} as const;

/** `--namespace NS`: where a job name is looked up (the server defaults to `default`); ids match in every namespace. */
export const NAMESPACE_OPTION = { namespace: { type: "string" } } as const;
