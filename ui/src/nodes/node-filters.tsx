import { useState } from "preact/hooks";

/** Shoal's node-list filters, as the API's query parameters name them. */
export interface NodeFilters {
  readonly "filter-approval": string;
  readonly "filter-status": string;
  readonly "filter-cordoned": string;
  readonly "filter-drain": string;
  readonly labels: string;
}

export const NO_FILTERS: NodeFilters = {
  "filter-approval": "",
  "filter-status": "",
  "filter-cordoned": "",
  "filter-drain": "",
  labels: "",
};

const CHOICES: readonly (readonly [keyof NodeFilters, string, readonly (readonly [string, string])[]])[] = [
  [
    "filter-approval",
    "Approval",
    [
      ["PENDING", "Pending"],
      ["APPROVED", "Approved"],
      ["REJECTED", "Rejected"],
    ],
  ],
  [
    "filter-status",
    "Status",
    [
      ["HEALTHY", "Healthy"],
      ["UNHEALTHY", "Unhealthy"],
      ["UNKNOWN", "Unknown"],
    ],
  ],
  [
    "filter-cordoned",
    "Cordoned",
    [
      ["true", "Cordoned"],
      ["false", "Schedulable"],
    ],
  ],
  [
    "filter-drain",
    "Drain",
    [
      ["draining", "Draining"],
      ["drained", "Drained"],
      ["expired", "Expired"],
      ["none", "Not drained"],
    ],
  ],
];

/** Choices apply at once; the label selector when submitted (Enter or Apply), as it is typed in pieces. */
export function NodeFiltersForm(props: {
  readonly filters: NodeFilters;
  readonly onChange: (filters: NodeFilters) => void;
}) {
  const [labels, setLabels] = useState(props.filters.labels);
  return (
    <form
      class="filters"
      aria-label="Filter nodes"
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange({ ...props.filters, labels: labels.trim() });
      }}
    >
      {CHOICES.map(([name, label, options]) => (
        <label key={name}>
          {label}
          <select
            value={props.filters[name]}
            onChange={(e) => props.onChange({ ...props.filters, [name]: e.currentTarget.value })}
          >
            <option value="">Any</option>
            {options.map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </select>
        </label>
      ))}
      <label class="grow">
        Label selector
        <input
          value={labels}
          placeholder="zone=eu-west-1,gpu!=true"
          onInput={(e) => setLabels(e.currentTarget.value)}
        />
      </label>
      <button type="submit" class="secondary">
        Apply
      </button>
    </form>
  );
}
