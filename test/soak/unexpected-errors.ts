/** An orchestrator stderr line at pino level ≥ 50 (error, fatal), or one that is not JSON (level undefined). */
export interface LogLine {
  /** Which `shoal serve` start printed it (1, 2, 3). */
  readonly run: number;
  readonly level: number | undefined;
  readonly msg: string;
  readonly line: string;
}

interface Allowed {
  readonly msg: RegExp;
  /** Why an orchestrator that works as it should logs this during a soak. */
  readonly why: string;
}

/**
 * The error lines the soak expects. Each entry says why it is no fault; anything else at error or
 * fatal level fails the soak. Keep it short: an entry here hides that message in every run.
 *
 * Empty: a start after a kill -9, a clean stop and a start after it log no error, and none of the
 * error lines Shoal has (a publish JetStream refused, a processor or the transport down, a placement
 * that failed) is expected while the orchestrator runs. Warnings are not checked; the soak prints them.
 */
export const ALLOWED_ERRORS: readonly Allowed[] = [];

/** The lines no entry of the allow-list explains. */
export function unexpectedErrors(lines: readonly LogLine[], allowed: readonly Allowed[] = ALLOWED_ERRORS): LogLine[] {
  return lines.filter((l) => !allowed.some((a) => a.msg.test(l.msg)));
}
