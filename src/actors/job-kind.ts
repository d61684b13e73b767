import { jobDecider } from "../../machines/job/job-decider.ts";
import type { JobCommand, JobRefusal } from "../../machines/job/job-commands.ts";
import type { JobState } from "../../machines/job/job-state.ts";
import { jobEvents } from "../events/catalog/job-event-codec.ts";
import type { JobEvent } from "../events/catalog/job-events.ts";
import { ShoalError, notFound } from "../errors/shoal-error.ts";
import { entityKind, type EntityKind } from "./entity-kind.ts";

const hint = (text: string | undefined) => (text === undefined ? {} : { hint: text });

/** A job's refusal as one of Shoal's errors. */
export function jobRefusalError(refusal: JobRefusal): ShoalError {
  switch (refusal.code) {
    case "NotFound":
      return notFound(refusal.message);
    case "Conflict":
      return new ShoalError({ kind: "Conflict", message: refusal.message, ...hint(refusal.hint) });
    case "Invalid":
      // Every problem, each with its field path, so a client can show them all at once.
      return new ShoalError({
        kind: "BadRequest",
        message: refusal.message,
        ...hint(refusal.hint),
        ...(refusal.problems.length === 0
          ? {}
          : { details: { problems: refusal.problems.map((p) => ({ path: p.path, message: p.message })) } }),
      });
  }
}

export type JobKind = EntityKind<JobState, JobCommand, JobEvent, JobRefusal>;

/** Jobs as the generic actor host sees them. */
export const jobKind: JobKind = entityKind(jobEvents, { decider: jobDecider, refusalError: jobRefusalError });
