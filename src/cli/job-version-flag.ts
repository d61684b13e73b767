import { wholeNumberFlag } from "./number-flag.ts";

/** Bacalhau's `-v/--version N` of the job commands: a job version, 0 for the current one (the API's job_version). */
export const jobVersionFlag = (text: string, help: string): number =>
  wholeNumberFlag(text, "--version", 0, 999_999_999_999, help);
