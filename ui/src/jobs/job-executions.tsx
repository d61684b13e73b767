import type { Execution } from "../api/types.ts";
import { Time } from "../common/format.tsx";
import { computeStateName, desiredStateName, nanosToIso } from "./job-format.tsx";
import { DataTable } from "../common/data-table.tsx";

/** The job's executions: where each runs, its states and their messages, when it began and last changed. */
export function JobExecutions(props: { readonly executions: readonly Execution[] }) {
  return (
    <section aria-labelledby="executions-title">
      <h2 id="executions-title">Executions</h2>
      <DataTable
        caption="Executions"
        class="executions"
        columns={["Execution", "Node", "State", "Desired", "Exit code", "Created", "Modified"]}
        items={props.executions}
        empty="None yet: the job has not been placed on a node."
        row={(execution) => (
          <tr key={execution.ID}>
            <th scope="row">
              <code>{execution.ID}</code>
            </th>
            <td>
              <a href={`/ui/nodes/${encodeURIComponent(execution.NodeID)}`}>{execution.NodeID}</a>
            </td>
            <td>
              {computeStateName(execution.ComputeState.StateType)}
              {execution.ComputeState.Message === "" ? null : (
                <span class="muted"> — {execution.ComputeState.Message}</span>
              )}
            </td>
            <td>{desiredStateName(execution.DesiredState.StateType)}</td>
            <td>{execution.RunOutput?.ExitCode ?? "—"}</td>
            <td>
              <Time at={nanosToIso(execution.CreateTime)} />
            </td>
            <td>
              <Time at={nanosToIso(execution.ModifyTime)} />
            </td>
          </tr>
        )}
      />
    </section>
  );
}
