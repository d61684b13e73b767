import { useState } from "preact/hooks";
import { auditDiff, type AuditChange, type AuditDiff } from "../api/audit-endpoints.ts";
import { ErrorAlert, Time, errorText } from "../common/format.tsx";
import { useSession } from "../session/session.tsx";
import { localToIso } from "./moment.ts";
import { DataTable } from "../common/data-table.tsx";

function Changes(props: { readonly title: string; readonly changes: readonly AuditChange[] }) {
  return (
    <>
      <h3>{props.title}</h3>
      <DataTable
        caption={props.title}
        columns={["Time", "Entity", "Change", "By", "Reason"]}
        items={props.changes}
        empty="No change."
        row={(c) => (
          <tr key={`${c.Position}-${c.Entity}-${c.Change}`}>
            <td>
              <Time at={c.Time} />
            </td>
            <th scope="row">{c.Entity}</th>
            <td>
              {c.Change}
              {c.Details === undefined ? null : <code class="muted"> {JSON.stringify(c.Details)}</code>}
            </td>
            <td>{c.By}</td>
            <td>{c.Reason}</td>
          </tr>
        )}
      />
    </>
  );
}

/** What changed to nodes and jobs between two moments, each in the reader's local time. */
export function AuditDiffView() {
  const session = useSession();
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [diff, setDiff] = useState<AuditDiff | undefined>();
  const [error, setError] = useState<string | undefined>();

  const show = async () => {
    try {
      setDiff(await auditDiff(session.client, localToIso(from), localToIso(to)));
      setError(undefined);
    } catch (e) {
      setDiff(undefined);
      setError(errorText(e));
    }
  };

  return (
    <section aria-labelledby="diff-title">
      <h2 id="diff-title">What changed between two moments</h2>
      <form
        class="filters"
        aria-label="Changes between"
        onSubmit={(e) => {
          e.preventDefault();
          void show();
        }}
      >
        <label>
          From
          <input type="datetime-local" step={1} required value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To
          <input type="datetime-local" step={1} required value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <button type="submit" class="secondary">
          Show the changes
        </button>
      </form>
      <ErrorAlert message={error} />
      {diff === undefined ? null : (
        <>
          <p class="muted">
            After position {diff.From.Position} up to position {diff.Through}
            {diff.Through < diff.To.Position ? ` (of ${diff.To.Position}: more than a page; ask again from there)` : ""}
            .
          </p>
          <Changes title="Nodes" changes={diff.Nodes} />
          <Changes title="Jobs" changes={diff.Jobs} />
        </>
      )}
    </section>
  );
}
