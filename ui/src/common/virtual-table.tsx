import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ColumnHeads, EmptyRow } from "./data-table.tsx";
import { rowWindow, windowAround } from "./row-window.ts";

/** Until a row has been measured (every row is one line high: the table's CSS keeps them so). */
const GUESSED_ROW_PX = 36;

/**
 * A list of any length as a table in its own scroller, drawing only the rows on screen and a margin: the DOM holds
 * a few dozen rows however many are loaded. Every row is one line (the same height), so the rows not drawn are
 * spacers of known height and nothing moves as the window slides. The header stays in view (sticky). For screen
 * readers the table counts its rows (aria-rowcount, -1 while more may follow) and each row says where it stands
 * (aria-rowindex, the header being row 1); the scroller is focusable, so arrows, Page Up/Down, Home and End scroll it.
 * `onWindow` hears which rows are drawn, to read what is near (more rows, rows gone stale).
 */
export function VirtualTable<T>(props: {
  readonly caption: string;
  readonly class?: string;
  readonly columns: readonly string[];
  readonly items: readonly T[];
  /** Every row is loaded: the row count is known. */
  readonly complete: boolean;
  /** What is shown may be out of date (the last read failed). */
  readonly stale?: boolean;
  /** The only row while there is none. */
  readonly empty: string;
  readonly itemKey: (item: T) => string;
  /** A row's cells (its first a `<th scope="row">`). */
  readonly cells: (item: T) => ComponentChildren;
  readonly onWindow?: (first: number, last: number) => void;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const tbody = useRef<HTMLTableSectionElement>(null);
  const [view, setView] = useState({ scrollTop: 0, height: 0 });
  const [rowPx, setRowPx] = useState(GUESSED_ROW_PX);
  const [focused, setFocused] = useState<number | null>(null);
  const count = props.items.length;
  const scrolled = rowWindow(view.scrollTop, view.height, rowPx, count);
  const { first, last } = windowAround(scrolled, focused, count);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (element === null) return;
    const measure = () => setView({ scrollTop: element.scrollTop, height: element.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  // Heard as focus moves, before the key that moved it is followed by another: the scroll event comes a frame later.
  useLayoutEffect(() => {
    const body = tbody.current;
    if (body === null) return;
    const rowOf = (target: EventTarget | null) =>
      target instanceof Element ? target.closest<HTMLElement>("tr[aria-rowindex]") : null;
    const onFocusIn = (event: FocusEvent) => {
      const index = Number(rowOf(event.target)?.getAttribute("aria-rowindex"));
      setFocused(Number.isInteger(index) && index >= 2 ? index - 2 : null);
    };
    const onFocusOut = (event: FocusEvent) => {
      if (!(event.relatedTarget instanceof Node && body.contains(event.relatedTarget))) setFocused(null);
    };
    body.addEventListener("focusin", onFocusIn);
    body.addEventListener("focusout", onFocusOut);
    return () => {
      body.removeEventListener("focusin", onFocusIn);
      body.removeEventListener("focusout", onFocusOut);
    };
  }, []);

  // Rows are one line each; their height follows the font, so it is read from one drawn.
  useLayoutEffect(() => {
    const row = tbody.current?.querySelector<HTMLElement>("tr[aria-rowindex]");
    const height = row?.getBoundingClientRect().height ?? 0;
    if (height > 0 && Math.abs(height - rowPx) > 0.5) setRowPx(height);
  });

  const onWindow = props.onWindow;
  useEffect(() => onWindow?.(first, last), [onWindow, first, last, count]);

  const onScroll = () => {
    const element = scroller.current;
    if (element === null) return;
    const next = rowWindow(element.scrollTop, element.clientHeight, rowPx, count);
    // Redrawn only when the window moves by a row, not per pixel scrolled.
    if (next.first !== scrolled.first || next.last !== scrolled.last)
      setView({ scrollTop: element.scrollTop, height: element.clientHeight });
  };

  const spacer = (rows: number, key: string) =>
    rows <= 0 ? null : (
      <tr key={key} class="spacer" aria-hidden="true">
        <td colSpan={props.columns.length} style={{ height: `${rows * rowPx}px` }} />
      </tr>
    );

  return (
    <div
      class="virtual-scroller"
      ref={scroller}
      tabIndex={0}
      role="region"
      aria-label={`${props.caption} (scrolls)`}
      onScroll={onScroll}
    >
      <table
        class={`virtual ${props.class ?? ""}${props.stale ? " stale" : ""}`}
        aria-rowcount={props.complete ? count + 1 : -1}
      >
        <caption class="visually-hidden">
          {props.caption}
          {props.stale ? " (not current)" : ""}
        </caption>
        <ColumnHeads columns={props.columns} rowIndex={1} />
        <tbody ref={tbody}>
          {count === 0 ? (
            <EmptyRow columns={props.columns} text={props.empty} />
          ) : (
            [
              spacer(first, "before"),
              ...props.items.slice(first, last).map((item, i) => (
                <tr key={props.itemKey(item)} aria-rowindex={first + i + 2}>
                  {props.cells(item)}
                </tr>
              )),
              spacer(count - last, "after"),
            ]
          )}
        </tbody>
      </table>
    </div>
  );
}
