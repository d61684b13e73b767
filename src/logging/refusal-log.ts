import type { Logger } from "pino";

/** A kind of refusal is logged at most this often; the next line says how many were not. */
export const REFUSAL_LOG_INTERVAL_MS = 10_000;

interface Kind {
  at: number;
  notLogged: number;
}

/**
 * Warnings about nodes' messages that were refused (invalid, unknown node, wrong reply subject),
 * at most one line per kind of refusal (the log message and the error kind: a fixed set, so the
 * memory this holds is too) per interval. A flood of junk costs no log line per message, and
 * what each line says is what an operator needs: that it happens, one example, and how often.
 */
export class RefusalLog {
  private readonly kinds = new Map<string, Kind>();

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = REFUSAL_LOG_INTERVAL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** `message` must be a constant (it keys the rate); `fields` describe this one refusal. */
  warn(message: string, kind: string, fields: () => Record<string, unknown>): void {
    const key = `${kind} ${message}`;
    const now = this.now();
    const known = this.kinds.get(key);
    if (known !== undefined && now - known.at < this.intervalMs) {
      known.notLogged++;
      return;
    }
    const notLogged = known?.notLogged ?? 0;
    this.kinds.set(key, { at: now, notLogged: 0 });
    this.logger.warn(
      { ...fields(), kind, ...(notLogged > 0 ? { notLogged, sinceMs: Math.round(now - (known?.at ?? now)) } : {}) },
      message,
    );
  }

  /** Kinds of refusal seen (bounded by the code's messages and the error kinds). */
  get size(): number {
    return this.kinds.size;
  }
}
