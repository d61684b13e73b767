import { API_OPTIONS } from "./api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "./config-flags.ts";

/** The options every `shoal job …` and `shoal docker run` command takes. */
export const JOB_COMMON_OPTIONS = {
  ...CONFIG_OPTIONS,
  ...API_OPTIONS,
  output: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;
