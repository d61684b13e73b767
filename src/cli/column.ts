import { localTime } from "./local-time.ts";

/** A cell: text, or an instant that each format writes its own way (local in tables, RFC 3339 in csv). */
export type Cell = string | Date | undefined;

/** How the output at hand writes cells. */
export interface CellFormat {
  /** Wide and csv output print whole values (ids not shortened), as Bacalhau's --wide does. */
  readonly full: boolean;
  /** An instant inside a longer text (`draining until …`): local in a table, RFC 3339 UTC in csv. */
  readonly time: (date: Date) => string;
}

/** One column of a listing, declared once per command: its header, its cell, and whether only wide output has it. */
export interface Column<T> {
  readonly header: string;
  readonly cell: (item: T, format: CellFormat) => Cell;
  readonly wide?: boolean;
}

/** An instant the API sent as text (RFC 3339); what does not parse is shown as it came, absent as `-`. */
export function timeCell(text: string | null | undefined): Cell {
  if (text === undefined || text === null || text === "") return "-";
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date;
}

/** An instant the API sent as text, as tables show it (in a heading over one). */
export function localTimeOf(text: string | null | undefined): string {
  const at = timeCell(text);
  return at instanceof Date ? localTime(at) : (at ?? "-");
}
