import type { Decider } from "../decider.ts";
import type { JobEvent } from "../../src/events/catalog/job-events.ts";
import { decideJob } from "./decide-job.ts";
import { evolveJob } from "./evolve-job.ts";
import type { JobCommand, JobRefusal } from "./job-commands.ts";
import { jobDeadlines } from "./job-deadlines.ts";
import { initialJobState, type JobState } from "./job-state.ts";

/** A job's rules as the generic actor host and the read model take them. */
export const jobDecider: Decider<JobState, JobCommand, JobEvent, JobRefusal> = {
  initialState: initialJobState,
  decide: (command, state, meta) => decideJob(command, state, meta.now),
  evolve: evolveJob,
  deadlines: jobDeadlines,
};
