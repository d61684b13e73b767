import type { Logger } from "pino";
import type { Clock } from "../../src/actors/clock.ts";
import type { DeadlineScheduler } from "../../src/actors/deadline-scheduler.ts";
import type { Listening } from "../../src/actors/listening.ts";
import { WorkResends } from "../../src/workflows/jobs/work-resends.ts";

/**
 * The orchestrator's WorkResends with no transport of its own: `listening` says when it is down (a test calls
 * transportDown/transportUp on it) and when the orchestrator hears its nodes again.
 */
export function listeningResends(parts: {
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly listening: Listening;
}): WorkResends {
  const { listening } = parts;
  return new WorkResends({ ...parts, transportDown: () => listening.transportDownReason !== undefined });
}
