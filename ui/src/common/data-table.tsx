import type { ComponentChildren } from "preact";

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
      <thead>
        <tr>
          {props.columns.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.items.length === 0 ? (
          <tr>
            <td colSpan={props.columns.length} class="muted">
              {props.empty}
            </td>
          </tr>
        ) : (
          props.items.map(props.row)
        )}
      </tbody>
    </table>
  );
}
