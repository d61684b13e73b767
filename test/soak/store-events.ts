import { join } from "node:path";
import Database from "better-sqlite3";

/** One stored event, as far as the soak's checks look at it. */
export interface StoreEvent {
  readonly position: number;
  readonly id: string;
  readonly stream: string;
  readonly type: string;
  /** The event's time (metadata.time), ISO. */
  readonly time: string;
  /** The job's type, on JobSubmitted only. */
  readonly jobType?: string;
  /** On JobSubmitted only: `sim` for a job constrained to sim=true (the virtual nodes), else `docker`. */
  readonly runsOn?: "sim" | "docker";
}

interface SubmittedJob {
  readonly Job: { readonly Type: string; readonly Constraints?: readonly { Key: string; Values?: string[] }[] };
}

const runsOn = ({ Job }: SubmittedJob): "sim" | "docker" =>
  Job.Constraints?.some((c) => c.Key === "sim" && c.Values?.includes("true")) ? "sim" : "docker";

/**
 * Every event in the orchestrator's SQLite store, in store order, read as an auditor's tool would:
 * the file opened read-only beside the running (or stopped) orchestrator (WAL lets it read beside
 * the writer), read and closed again.
 */
export function storeEvents(dataDir: string): StoreEvent[] {
  const db = new Database(join(dataDir, "shoal.db"), { readonly: true, fileMustExist: true });
  try {
    const query = db.prepare("SELECT position, event_id, stream, type, time, data FROM events ORDER BY position");
    const rows = query.raw().all() as [number, string, string, string, string | null, string][];
    return rows.map(([position, id, stream, type, time, data]) => {
      const event = { position, id, stream, type, time: time ?? "" };
      if (type !== "JobSubmitted") return event;
      const submitted = JSON.parse(data) as SubmittedJob;
      return { ...event, jobType: submitted.Job.Type, runsOn: runsOn(submitted) };
    });
  } finally {
    db.close();
  }
}
