import { computeStateNumber } from "../../../machines/execution/execution-states.ts";
import { evolveExecution } from "../../../machines/execution/evolve-execution.ts";
import { initialExecutionState } from "../../../machines/execution/execution-state.ts";
import { evolveJob } from "../../../machines/job/evolve-job.ts";
import { executionHistoryEvent, jobHistoryEvent, type HistoryEvent } from "../../../machines/job/history-event.ts";
import { initialJobState, type JobStateName } from "../../../machines/job/job-state.ts";
import { decodeExecutionEvent } from "../../events/catalog/execution-event-codec.ts";
import { decodeJobEvent } from "../../events/catalog/job-event-codec.ts";
import type { EventStore } from "../../events/store/event-store.ts";
import { executionStream, jobStream } from "../../events/streams.ts";
import { withEventActor } from "./with-event-actor.ts";

/**
 * One entry of a job's history as Bacalhau v1.7 serializes models.JobHistory: JobLevel entries
 * carry the job's state change, ExecutionLevel ones the execution's (compute states as Bacalhau's
 * integers). SeqNum is the event's store position: increasing across the job and its executions.
 * Event.Details also says who caused the entry and why (`withEventActor`).
 */
export interface JobHistoryEntry {
  readonly Type: "JobLevel" | "ExecutionLevel";
  readonly JobID: string;
  readonly ExecutionID?: string;
  readonly JobVersion: number;
  readonly JobState?: { readonly Previous: JobStateName | "Undefined"; readonly New: JobStateName | "Undefined" };
  readonly ExecutionState?: { readonly Previous: number; readonly New: number };
  readonly Event: HistoryEvent & { readonly Timestamp: string };
  readonly Time: string;
  readonly SeqNum: number;
}

export type HistoryEventType = "all" | "job" | "execution";

export interface HistoryQuery {
  /** Unix seconds: only entries at or after it. */
  readonly since?: number;
  readonly eventType: HistoryEventType;
  readonly executionId?: string;
  /** Continue after this SeqNum. */
  readonly after?: number;
  readonly limit: number;
  /** The history as of this store position: no entry after it. */
  readonly through?: number;
  /** Only the entries of this version of the job (Bacalhau's job_version; undefined: every version's). */
  readonly jobVersion?: number;
}

/**
 * A job's history straight from its streams (the job's and its executions'), merged in store
 * order: the store is the auditor's source of truth, as for a node's history.
 */
export class JobHistory {
  constructor(private readonly store: EventStore) {}

  async entries(
    jobId: string,
    executionIds: readonly string[],
    query: HistoryQuery,
  ): Promise<{ items: JobHistoryEntry[]; next: number | undefined }> {
    const out: JobHistoryEntry[] = [];
    let version = 0;
    const through = query.through ?? Number.POSITIVE_INFINITY;
    if (query.eventType !== "execution" && query.executionId === undefined) {
      let state = initialJobState(jobId);
      for (const recorded of await this.store.readStream(jobStream(jobId))) {
        if (recorded.position > through) break;
        const event = decodeJobEvent(recorded);
        const next = evolveJob(state, event, recorded.time);
        version = next.version;
        out.push({
          Type: "JobLevel",
          JobID: jobId,
          JobVersion: next.version,
          JobState: { Previous: state.state ?? "Undefined", New: next.state ?? "Undefined" },
          Event: { ...withEventActor(jobHistoryEvent(event), recorded.metadata), Timestamp: recorded.time },
          Time: recorded.time,
          SeqNum: recorded.position,
        });
        state = next;
      }
    }
    if (query.eventType !== "job") {
      const ids =
        query.executionId === undefined ? executionIds : executionIds.filter((id) => id === query.executionId);
      for (const executionId of ids) {
        let state = initialExecutionState(executionId);
        for (const recorded of await this.store.readStream(executionStream(executionId))) {
          if (recorded.position > through) break;
          const event = decodeExecutionEvent(recorded);
          const next = evolveExecution(state, event, recorded.time);
          const reason = recorded.metadata.reason;
          const entry = executionHistoryEvent(event, typeof reason === "string" ? reason : undefined);
          if (entry !== undefined) {
            out.push({
              Type: "ExecutionLevel",
              JobID: jobId,
              ExecutionID: executionId,
              JobVersion: next.jobVersion || version,
              ExecutionState: {
                Previous: state.computeState === undefined ? 0 : computeStateNumber(state.computeState),
                New: next.computeState === undefined ? 0 : computeStateNumber(next.computeState),
              },
              Event: { ...withEventActor(entry, recorded.metadata), Timestamp: recorded.time },
              Time: recorded.time,
              SeqNum: recorded.position,
            });
          }
          state = next;
        }
      }
    }
    out.sort((a, b) => a.SeqNum - b.SeqNum);
    const sinceMs = query.since === undefined ? undefined : query.since * 1000;
    const filtered = out.filter(
      (e) =>
        (query.after === undefined || e.SeqNum > query.after) &&
        (query.jobVersion === undefined || e.JobVersion === query.jobVersion) &&
        (sinceMs === undefined || Date.parse(e.Time) >= sinceMs),
    );
    const items = filtered.slice(0, query.limit);
    const next = filtered.length > query.limit ? items[items.length - 1]?.SeqNum : undefined;
    return { items, next };
  }
}
