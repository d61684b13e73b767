import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../fs/write-file-atomic.ts";
import type { ExecutionReport } from "../transport/work-messages.ts";

/** What a compute node remembers of one execution across a restart. */
export interface KnownExecution {
  readonly jobId: string;
  /** The publisher of its results, when its task has one: its end publishes them, after a restart too. */
  readonly publisher?: string;
  /** Its last report (its end), until the orchestrator has answered it: the container is gone by then. */
  readonly final?: ExecutionReport;
  /** Its end was answered: kept (id only) so that a late repeat of its work does not run it again. */
  readonly delivered?: true;
  /**
   * Told to stop (the reason) while its container was not yet watched again (a cancel that came before the restarted
   * node's reconcile adopted it): the reconcile that adopts it stops it.
   */
  readonly cancelled?: string;
}

/** Ended executions remembered against late repeats of their work; older ones are forgotten. */
export const REMEMBERED_ENDS = 256;

/**
 * The executions a compute node has taken and not yet seen through, kept in
 * `<dataDir>/<nodeId>.executions.json` (written atomically at every change): a restarted agent
 * reconciles the engine's containers against it and reports what it finds, and still delivers an
 * end it had not delivered before it stopped.
 */
export class KnownExecutions {
  private readonly file: string | undefined;
  private readonly entries = new Map<string, KnownExecution>();

  /** Without a DataDir: kept in memory only, for a node whose executions end with its process (a simulated one). */
  constructor(dataDir: string | undefined, nodeId: string) {
    this.file = dataDir === undefined ? undefined : join(dataDir, `${nodeId}.executions.json`);
    if (this.file === undefined || !existsSync(this.file)) return;
    const saved = JSON.parse(readFileSync(this.file, "utf8")) as Record<string, KnownExecution>;
    for (const [id, entry] of Object.entries(saved)) this.entries.set(id, entry);
  }

  get(executionId: string): KnownExecution | undefined {
    return this.entries.get(executionId);
  }

  ids(): string[] {
    return [...this.entries.keys()];
  }

  set(executionId: string, entry: KnownExecution): void {
    this.entries.set(executionId, entry);
    this.save();
  }

  delete(executionId: string): void {
    if (this.entries.delete(executionId)) this.save();
  }

  /** Its end was answered: only its id is kept, and only the newest REMEMBERED_ENDS of those. */
  delivered(executionId: string): void {
    const entry = this.entries.get(executionId);
    if (entry === undefined) return;
    // Re-inserted: Map order is then the order ends were delivered in.
    this.entries.delete(executionId);
    this.entries.set(executionId, { jobId: entry.jobId, delivered: true });
    let excess = [...this.entries.values()].filter((e) => e.delivered).length - REMEMBERED_ENDS;
    for (const [id, e] of this.entries) {
      if (excess <= 0) break;
      if (e.delivered) {
        this.entries.delete(id);
        excess -= 1;
      }
    }
    this.save();
  }

  private save(): void {
    if (this.file === undefined) return;
    writeFileAtomic(this.file, `${JSON.stringify(Object.fromEntries(this.entries))}\n`, 0o600);
  }
}
