import type { ExecutionState } from "../../machines/execution/execution-state.ts";

/** The job's failure as its history shows it: which execution, where, why, and the command's exit code when it ran. */
export function failureOf(e: ExecutionState): string {
  // The node's reason often names the execution again: said once, here. An exit code below 0 is
  // the executor's "no process exited" (an image missing, a container never started): not said.
  const why = (e.computeMessage || e.computeState || "failed")
    .replace(`execution ${e.executionId}: `, "")
    .replace(`execution ${e.executionId} `, "");
  const code = e.runOutput?.ExitCode;
  const exit = code === undefined || code < 0 || why.includes(`exited with code ${code}`) ? "" : ` (exit code ${code})`;
  return `execution ${e.executionId} on node ${e.nodeId} ${e.computeState === "Failed" ? "failed" : "ended"}: ${why}${exit}`;
}
