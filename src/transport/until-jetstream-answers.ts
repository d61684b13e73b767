import type { Logger } from "pino";
import type { Clock } from "../actors/clock.ts";
import type { DeadlineScheduler } from "../actors/deadline-scheduler.ts";
import { JS_CODES, jsErrorCode } from "./jetstream-api-error.ts";
import { isUnreachable } from "./unreachable.ts";

const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 5_000;
/**
 * How long start-up waits for JetStream to answer: a replicated cluster that lost or regained a server elects its
 * leaders within seconds, longer on a busy machine; a NATS without JetStream at all fails start-up after this.
 */
export const JETSTREAM_START_UP_PATIENCE_MS = 60_000;

export interface JetStreamAnswerOptions {
  readonly clock: Clock;
  readonly deadlines: DeadlineScheduler;
  readonly logger: Logger;
  readonly patienceMs?: number;
  /** Whose answer is awaited, for the log: JetStream unless said. */
  readonly who?: string;
}

/** Whether JetStream did not answer (no responders, a timeout, a cut connection, a leader election under way). */
export function jetStreamBusy(err: unknown): boolean {
  const apiCode = jsErrorCode(err);
  return apiCode === JS_CODES.TEMPORARILY_UNAVAILABLE || (apiCode === undefined && isUnreachable(err));
}

/**
 * `call`'s result once JetStream answers it. A start-up step that needs JetStream (opening a bucket, making a stream)
 * must neither abort on a NATS cluster that is busy electing leaders nor wait on it silently: each unanswered try is
 * logged, and tried again after a pause that doubles up to 5 s, until `patienceMs` has passed; then, or on any
 * answer that refuses, the failure is thrown. `call` must be safe to repeat (a timed-out request may have landed).
 */
export async function untilJetStreamAnswers<T>(
  what: string,
  call: () => Promise<T>,
  options: JetStreamAnswerOptions,
): Promise<T> {
  const { clock, deadlines, logger } = options;
  const patienceMs = options.patienceMs ?? JETSTREAM_START_UP_PATIENCE_MS;
  const started = clock.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const waitedMs = clock.now() - started;
      if (!jetStreamBusy(err) || waitedMs >= patienceMs) throw err;
      const pauseMs = Math.min(FIRST_PAUSE_MS * 2 ** (attempt - 1), MAX_PAUSE_MS, patienceMs - waitedMs);
      logger.warn(
        { err, what, attempt, waitedMs, pauseMs },
        `${options.who ?? "JetStream"} did not answer ${what}; trying again`,
      );
      await deadlines.sleep(`jetstream-start-up:${what}`, pauseMs);
    }
  }
}
