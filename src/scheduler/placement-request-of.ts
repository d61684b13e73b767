import { taskOf, type JobSpec } from "../../machines/job/job-spec.ts";
import type { JobState } from "../../machines/job/job-state.ts";
import { parseTaskResources } from "../../machines/job/task-resources.ts";
import type { ExistingExecution, PlacementRequest } from "./placement-request.ts";
import { fromBacalhauResources } from "./resources.ts";

/**
 * What the pure scheduler is asked for one job: its spec, its executions as placement counts them, the fleet, now. Its
 * QueueTimeout counts from the current version's start (an update or rerun starts it afresh), as the job's deadlines.
 */
export function placementRequestOf(
  job: Pick<JobState, "jobId" | "versionTime">,
  spec: JobSpec,
  executions: readonly ExistingExecution[],
  nodes: PlacementRequest["nodes"],
  nowMs: number,
): PlacementRequest {
  const task = taskOf(spec);
  const storageTypes = [...new Set((task.InputSources ?? []).map((i) => i.Source.Type))];
  // A blank type is no publisher (as Bacalhau's publishers ranker: "publisher is optional and can be empty").
  const publisher = task.Publisher?.Type ?? "";
  return {
    jobId: job.jobId,
    type: spec.Type,
    count: spec.Count,
    constraints: spec.Constraints.map((r) => ({ key: r.Key, operator: r.Operator, values: r.Values })),
    engine: task.Engine.Type,
    ...(publisher === "" ? {} : { publisher }),
    ...(storageTypes.length === 0 ? {} : { storageTypes }),
    resources: fromBacalhauResources(parseTaskResources(task.Resources)),
    executions,
    nodes,
    queue: { timeoutMs: task.Timeouts.QueueTimeout * 1000, createdAtMs: job.versionTime, nowMs },
  };
}
