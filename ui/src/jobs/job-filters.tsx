import { useState } from "preact/hooks";

/** The job list's query as the API names it (docs/jobs.md, List). */
export interface JobFilters {
  readonly namespace: string;
  readonly labels: string;
  readonly order_by: string;
  readonly reverse: string;
}

/** Newest first, every namespace. */
export const DEFAULT_JOB_FILTERS: JobFilters = { namespace: "", labels: "", order_by: "created_at", reverse: "true" };

const ORDERS: readonly (readonly [string, string])[] = [
  ["created_at", "Created"],
  ["modified_at", "Modified"],
  ["id", "ID"],
];

/** The order applies at once; the namespace and the label selector when submitted (Enter or Apply). */
export function JobFiltersForm(props: { readonly filters: JobFilters; readonly onChange: (f: JobFilters) => void }) {
  const [namespace, setNamespace] = useState(props.filters.namespace);
  const [labels, setLabels] = useState(props.filters.labels);
  return (
    <form
      class="filters"
      aria-label="Filter jobs"
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange({ ...props.filters, namespace: namespace.trim(), labels: labels.trim() });
      }}
    >
      <label>
        Order by
        <select
          value={props.filters.order_by}
          onChange={(e) => props.onChange({ ...props.filters, order_by: e.currentTarget.value })}
        >
          {ORDERS.map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </select>
      </label>
      <label>
        Direction
        <select
          value={props.filters.reverse}
          onChange={(e) => props.onChange({ ...props.filters, reverse: e.currentTarget.value })}
        >
          <option value="true">Descending</option>
          <option value="false">Ascending</option>
        </select>
      </label>
      <label>
        Namespace
        <input value={namespace} placeholder="every namespace" onInput={(e) => setNamespace(e.currentTarget.value)} />
      </label>
      <label class="grow">
        Label selector
        <input value={labels} placeholder="team=ml,tier!=batch" onInput={(e) => setLabels(e.currentTarget.value)} />
      </label>
      <button type="submit" class="secondary">
        Apply
      </button>
    </form>
  );
}
