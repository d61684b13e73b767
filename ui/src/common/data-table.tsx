import type { ComponentChildren } from "preact";

/** A table's column heads; `rowIndex` where the table counts its rows for screen readers (the heads are row 1). */
export function ColumnHeads(props: { readonly columns: readonly string[]; readonly rowIndex?: number }) {
  return (
    <thead>
      <tr aria-rowindex={props.rowIndex}>
        {props.columns.map((column) => (
          <th key={column} scope="col">
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** The one row of a table with nothing to list, saying why. */
export function EmptyRow(props: { readonly columns: readonly string[]; readonly text: string }) {
  return (
    <tr>
      <td colSpan={props.columns.length} class="muted">
        {props.text}
      </td>
    </tr>
  );
}

/**
 * A list as a table: its caption (for screen readers only unless `captionShown`), its column heads, a row per item
 * (`row` gives its `<tr>`), or `empty` in one row when there is none.
 */
export function DataTable<T>(props: {
  readonly caption: ComponentChildren;
  readonly captionShown?: boolean;
  readonly class?: string;
  readonly columns: readonly string[];
  readonly items: readonly T[];
  readonly empty: string;
  readonly row: (item: T) => ComponentChildren;
}) {
  return (
    <table class={props.class}>
      <caption class={props.captionShown ? undefined : "visually-hidden"}>{props.caption}</caption>
      <ColumnHeads columns={props.columns} />
      <tbody>
        {props.items.length === 0 ? (
          <EmptyRow columns={props.columns} text={props.empty} />
        ) : (
          props.items.map(props.row)
        )}
      </tbody>
    </table>
  );
}
