const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * The one time format of every table: Go's time.DateTime (`2006-01-02 15:04:05`), in the local time zone (TZ).
 * Machine output (json, yaml, csv) carries RFC 3339 in UTC instead: see machineTime.
 */
export function localTime(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${timeOnly(date)}`;
}

/** RFC 3339 in UTC with a `Z`, to the millisecond: what json, yaml and csv carry. */
export const machineTime = (date: Date): string => date.toISOString();

/** Go's time.TimeOnly (`15:04:05`), local time: the progress lines' clock. */
export function timeOnly(date: Date): string {
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** `15:04:05.000`: the progress lines' time. */
export function timeOnlyMilli(date: Date): string {
  return `${timeOnly(date)}.${pad(date.getMilliseconds(), 3)}`;
}
