import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";

/**
 * When a run's jobs were submitted and first placed, read back from its store: each job's JobSubmitted and its first
 * ExecutionCreated, by the times their writers recorded (the API that took the submission; the jobs duty's holder
 * when it decided the placement). All orchestrators of a bench share this machine's clock.
 */
export interface PlacementTimeline {
  readonly jobs: number;
  readonly placed: number;
  /** From the first JobSubmitted to the last. */
  readonly submittingMs: number;
  /** From the first JobSubmitted to the first ExecutionCreated; undefined when nothing was placed. */
  readonly firstPlacementMs: number | undefined;
  /** Jobs first placed before the last JobSubmitted. */
  readonly placedWhileSubmitting: number;
  /** JobSubmitted → the job's first ExecutionCreated, per placed job, ascending. */
  readonly waitsMs: readonly number[];
  /** Per whole second since the first submission: how many jobs were submitted, and how many first placed. */
  readonly submittedPerSecond: readonly number[];
  readonly placedPerSecond: readonly number[];
}

function jobIdOf(data: unknown): string | undefined {
  const id = (data as { readonly JobID?: unknown }).JobID;
  return typeof id === "string" ? id : undefined;
}

/** Reads the whole store: a bench's own, after its run. */
export async function placementTimeline(storeUrl: string): Promise<PlacementTimeline> {
  const submitted = new Map<string, number>();
  const placed = new Map<string, number>();
  const store = await EsdbEventStore.open(storeUrl);
  try {
    for await (const page of store.readAllPages({ pageSize: 4_096 })) {
      for (const e of page) {
        if (e.type !== "JobSubmitted" && e.type !== "ExecutionCreated") continue;
        const id = jobIdOf(e.data);
        if (id === undefined) continue;
        if (e.type === "JobSubmitted") submitted.set(id, Date.parse(e.time));
        else if (!placed.has(id)) placed.set(id, Date.parse(e.time));
      }
    }
  } finally {
    await store.close();
  }
  const submitTimes = [...submitted.values()];
  const placeTimes = [...placed.values()];
  const start = Math.min(...submitTimes);
  const lastSubmission = Math.max(...submitTimes);
  const perSecond = (times: readonly number[]): number[] => {
    const counts: number[] = [];
    for (const t of times) {
      const s = Math.max(0, Math.floor((t - start) / 1000));
      while (counts.length <= s) counts.push(0);
      counts[s] = (counts[s] ?? 0) + 1;
    }
    return counts;
  };
  const waitsMs = [...placed].flatMap(([id, at]) => {
    const from = submitted.get(id);
    return from === undefined ? [] : [at - from];
  });
  return {
    jobs: submitted.size,
    placed: placed.size,
    submittingMs: submitTimes.length === 0 ? 0 : lastSubmission - start,
    firstPlacementMs: placeTimes.length === 0 ? undefined : Math.min(...placeTimes) - start,
    placedWhileSubmitting: placeTimes.filter((t) => t < lastSubmission).length,
    waitsMs: waitsMs.sort((a, b) => a - b),
    submittedPerSecond: perSecond(submitTimes),
    placedPerSecond: perSecond(placeTimes),
  };
}
