/**
 * A `datetime-local` input's value (the reader's local time, no offset) as the RFC 3339 instant the API takes;
 * empty stays empty (no bound).
 */
export const localToIso = (local: string): string => (local === "" ? "" : new Date(local).toISOString());

const two = (n: number) => String(n).padStart(2, "0");

/** An RFC 3339 instant as a `datetime-local` input's value in the reader's local time (whole seconds); empty stays. */
export function isoToLocal(iso: string): string {
  const d = new Date(iso);
  if (iso === "" || Number.isNaN(d.getTime())) return "";
  const date = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
  return `${date}T${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
