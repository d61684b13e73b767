import { taskOf, type JobSpec, type TaskSpec } from "../../../machines/job/job-spec.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import { parseTaskResources } from "../../../machines/job/task-resources.ts";
import type { WorkInput, WorkTask } from "../../transport/work-messages.ts";
import { bacalhauEnv } from "./execution-env.ts";

/** Bacalhau's network types as the work protocol carries them: Default is the node's choice, which Shoal makes None. */
function workNetwork(task: TaskSpec): WorkTask["Network"] {
  switch (task.Network.Type) {
    case "Host":
    case "Full":
    case "HTTP":
      return task.Network.Type;
    case "Bridge":
      return "Full";
    default:
      return "None";
  }
}

/** The task's inputs as the work protocol carries them: each type's params, as the spec stored them. */
function workInputs(task: TaskSpec): WorkInput[] {
  return (task.InputSources ?? []).map(({ Source: { Type, Params }, Target }) =>
    Type === "localDirectory"
      ? { Type, SourcePath: String(Params.SourcePath ?? ""), ReadWrite: Params.ReadWrite === true, Target }
      : { Type: "urlDownload", URL: String(Params.URL ?? ""), Target },
  );
}

/** The task an execution's work message carries: its job's one task, with the env Bacalhau gives every execution. */
export function workTaskOf(spec: JobSpec, execution: ExecutionState): WorkTask {
  const task = taskOf(spec);
  const p = task.Engine.Params;
  const r = parseTaskResources(task.Resources);
  const inputs = workInputs(task);
  return {
    Engine: {
      Type: "docker",
      Image: p.Image,
      ...(p.Entrypoint.length > 0 ? { Entrypoint: p.Entrypoint } : {}),
      ...(p.Parameters.length > 0 ? { Parameters: p.Parameters } : {}),
      ...(p.EnvironmentVariables.length > 0 ? { EnvironmentVariables: p.EnvironmentVariables } : {}),
      ...(p.WorkingDirectory !== "" ? { WorkingDirectory: p.WorkingDirectory } : {}),
    },
    Env: { ...task.Env, ...bacalhauEnv(spec, execution) },
    Resources: { CPUMillis: Math.max(1, Math.round(r.CPU * 1000)), MemoryBytes: Math.max(1, Math.round(r.Memory)) },
    Network: workNetwork(task),
    ExecutionTimeout: execution.executionTimeout,
    ...(inputs.length === 0 ? {} : { InputSources: inputs }),
    ...(task.Publisher?.Type === "local"
      ? { Publisher: { Type: "local" as const }, ResultPaths: (task.ResultPaths ?? []).map((r) => ({ ...r })) }
      : {}),
  };
}
