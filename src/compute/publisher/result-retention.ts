import { readFileSync } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../actors/clock.ts";
import { writeFileAtomic } from "../../fs/write-file-atomic.ts";
import { resultsToRemove, type HeldResult, type RetentionRule } from "./results-to-remove.ts";

/** How often the node applies its rule (and once when it starts). */
export const RESULT_SWEEP_MS = 60_000;

/** How long a removed result is still answered as removed (with when and why); after that it is simply not held. */
export const REMOVAL_NOTE_MS = 30 * 24 * 3_600_000;

const ARCHIVE = ".tar.gz";
const NOTE = ".removed.json";

interface RemovalNote {
  readonly RemovedAt: string;
  readonly Why: string;
}

export interface ResultRetentionOptions {
  readonly nodeId: string;
  /** The local publisher's directory: `<executionId>.tar.gz` archives. */
  readonly dir: string;
  readonly rule: RetentionRule;
  readonly clock: Clock;
  readonly logger: Logger;
}

const missing = (e: unknown) => (e as NodeJS.ErrnoException).code === "ENOENT";

/**
 * Removes the local publisher's archives the node's retention rule no longer keeps, on the node's clock, and leaves a
 * note of each removal beside them, so that a result asked for afterwards is answered with when and why it went
 * rather than as one never published.
 */
export class ResultRetention {
  private timer: TimerHandle | undefined;
  private sweeping: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: ResultRetentionOptions) {}

  /** Sweeps now, then every RESULT_SWEEP_MS until stopped. */
  start(): Promise<void> {
    const arm = () => {
      if (this.stopped) return;
      this.timer = this.options.clock.setTimer(RESULT_SWEEP_MS, () => void this.sweep().finally(arm));
    };
    return this.sweep().finally(arm);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** Applies the rule once (a sweep under way is joined, not doubled); a failure is logged, never thrown. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce()
      .catch((e: unknown) =>
        this.options.logger.error({ reason: (e as Error).message }, "could not apply the results' retention rule"),
      )
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Once the sweep under way (if any) has ended: what a stop or a test waits for. */
  idle(): Promise<void> {
    return this.sweeping ?? Promise.resolve();
  }

  /** Why the execution's result is no longer here, when the node removed it (recently enough to remember). */
  removedMessage(executionId: string): string | undefined {
    const note = this.note(executionId);
    if (note === undefined) return undefined;
    const { nodeId } = this.options;
    return `results of execution ${executionId} were removed from node ${nodeId} at ${note.RemovedAt}, ${note.Why}`;
  }

  private note(executionId: string): RemovalNote | undefined {
    try {
      return JSON.parse(readFileSync(this.notePath(executionId), "utf8")) as RemovalNote;
    } catch {
      return undefined;
    }
  }

  private notePath(executionId: string): string {
    return join(this.options.dir, `${executionId}${NOTE}`);
  }

  private async sweepOnce(): Promise<void> {
    const { dir, rule, clock, logger } = this.options;
    const now = clock.now();
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      if (missing(e)) return;
      throw e;
    }
    const held: HeldResult[] = [];
    const notes: string[] = [];
    for (const name of names) {
      if (name.endsWith(NOTE)) notes.push(name);
      if (!name.endsWith(ARCHIVE)) continue;
      const st = await stat(join(dir, name)).catch((e: unknown) => (missing(e) ? undefined : Promise.reject(e)));
      if (st?.isFile())
        held.push({ executionId: name.slice(0, -ARCHIVE.length), publishedAtMs: st.mtimeMs, bytes: st.size });
    }
    for (const removal of resultsToRemove(held, rule, now)) {
      // The note first: a reader that misses the archive finds why.
      const note: RemovalNote = { RemovedAt: new Date(now).toISOString(), Why: removal.why };
      writeFileAtomic(this.notePath(removal.executionId), `${JSON.stringify(note)}\n`);
      await rm(join(dir, `${removal.executionId}${ARCHIVE}`), { force: true });
      logger.info(
        { executionId: removal.executionId, bytes: removal.bytes, why: removal.why },
        "removed a published result (retention rule)",
      );
    }
    for (const name of notes) {
      const removedAt = Date.parse(this.note(name.slice(0, -NOTE.length))?.RemovedAt ?? "");
      // One unreadable (cut short by a crash) is of no use either.
      if (!(now - removedAt < REMOVAL_NOTE_MS)) await rm(join(dir, name), { force: true });
    }
  }
}
