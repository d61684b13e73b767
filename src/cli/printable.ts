// Control characters are what this file is about; the patterns name them on purpose.
/* eslint-disable no-control-regex */

/**
 * C0 controls (ESC starts a terminal escape sequence, CR overwrites what was printed), DEL,
 * C1 controls (CSI and OSC are escape sequences on their own in many terminals), and the
 * Unicode bidirectional controls that can make a line read differently from what it holds.
 */
const UNSAFE_MULTILINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
/** The same, plus newline and tab: inside a table cell or a one-line message they would break the layout. */
const UNSAFE_SINGLE_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * Text that came from the API or a node (ids, labels, hostnames, reasons), made safe to print:
 * every unsafe character is shown as its `\uXXXX` escape instead of reaching the terminal raw.
 * Inside JSON strings and YAML double-quoted strings (where the yaml library puts C0 and C1
 * characters) that escape is valid syntax for the same character, so such output still parses
 * to the original value. Idempotent: its output holds nothing it would escape again.
 */
export function printable(text: string, options: { readonly multiline?: boolean } = {}): string {
  return text.replace(options.multiline ? UNSAFE_MULTILINE : UNSAFE_SINGLE_LINE, escape);
}

/**
 * Text for one line of a table or a log (a job's message, a reason): a multi-line text's lines joined with "; ",
 * blank ones left out, so that it reads as its writer meant rather than as \u000a escapes; then printable.
 */
export function printableCell(text: string): string {
  if (!text.includes("\n")) return printable(text);
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  return printable(lines.filter((l) => l !== "").join("; "));
}
