/**
 * A `datetime-local` input's value (the reader's local time, no offset) as the RFC 3339 instant the API takes;
 * empty stays empty (no bound).
 */
export const localToIso = (local: string): string => (local === "" ? "" : new Date(local).toISOString());
