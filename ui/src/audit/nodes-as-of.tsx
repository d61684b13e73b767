import { useState } from "preact/hooks";
import { listNodes } from "../api/endpoints.ts";
import type { NodeState } from "../api/types.ts";
import { ErrorAlert, Labels, errorText } from "../common/format.tsx";
import { NodeBadges } from "../nodes/node-badges.tsx";
import { useSession } from "../session/session.tsx";
import { localToIso } from "./moment.ts";
import { DataTable } from "../common/data-table.tsx";

const SHOWN = 200;

/** The nodes as they were at a moment (the node list's as_of), folded from the events stored up to it. */
export function NodesAsOf() {
  const session = useSession();
  const [moment, setMoment] = useState("");
  const [shown, setShown] = useState<{ readonly at: string; readonly nodes: readonly NodeState[] } | undefined>();
  const [error, setError] = useState<string | undefined>();

  const show = async () => {
    try {
      const at = localToIso(moment);
      const list = await listNodes(session.client, { as_of: at, limit: String(SHOWN) });
      setShown({ at, nodes: list.Nodes });
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  };

  return (
    <section aria-labelledby="as-of-title">
      <h2 id="as-of-title">The nodes as of a moment</h2>
      <form
        class="filters"
        aria-label="Nodes as of"
        onSubmit={(e) => {
          e.preventDefault();
          void show();
        }}
      >
        <label>
          As of
          <input
            type="datetime-local"
            step={1}
            required
            value={moment}
            onInput={(e) => setMoment(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="secondary">
          Show the nodes
        </button>
      </form>
      <ErrorAlert message={error} />
      {shown === undefined ? null : (
        <DataTable
          caption={
            <>
              Nodes as of <time dateTime={shown.at}>{new Date(shown.at).toLocaleString()}</time>
            </>
          }
          captionShown
          class="nodes"
          columns={["Node", "State", "Labels"]}
          items={shown.nodes}
          empty="No node then."
          row={(node) => (
            <tr key={node.Info.NodeID}>
              <th scope="row">{node.Info.NodeID}</th>
              <td>
                <NodeBadges node={node} />
              </td>
              <td>
                <Labels labels={node.Info.Labels} />
              </td>
            </tr>
          )}
        />
      )}
    </section>
  );
}
