import { COMPUTE_STATES, DESIRED_STATES } from "../../machines/execution/execution-states.ts";

// Table cells of jobs, executions and history as Bacalhau's CLI prints them (cmd/cli/job/*,
// cmd/util/cols). execution-states.ts is dependency-free: the CLI shares its names with the server.

/** Bacalhau's idgen.ShortUUID: `j-<uuid>` → `j-` and the uuid's first 8 characters; other ids as they are. */
export function shortId(id: string): string {
  const m = /^([a-z]+)-([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.exec(id);
  if (m) return `${m[1]}-${m[2]}`;
  const bare = /^([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.exec(id);
  return bare ? (bare[1] as string) : id;
}

/** Bacalhau's models times are nanoseconds since the epoch. */
export const nanosToDate = (nanos: number): Date => new Date(Math.floor(nanos / 1_000_000));

// The progress lines' clock (job-progress.ts) is kept where it always was; tables' time is local-time.ts's.
export { timeOnlyMilli } from "./local-time.ts";

/** Bacalhau's output.Elapsed: `3d4h`, `2h5m`, `5m10s`, `10s`. */
export function elapsed(since: Date, now = new Date()): string {
  const total = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000));
  const days = Math.floor(total / 86_400);
  const hours = Math.floor((total % 86_400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (days > 0) return hours > 0 ? `${days}d${hours}h` : `${days}d`;
  if (hours > 0) return minutes > 0 ? `${hours}h${minutes}m` : `${hours}h`;
  if (minutes > 0) return seconds > 0 ? `${minutes}m${seconds}s` : `${minutes}m`;
  return `${seconds}s`;
}

/** An execution's compute state, by the integer Bacalhau's API sends. */
export const computeStateName = (n: number): string => COMPUTE_STATES[n] ?? `Unknown(${n})`;
export const desiredStateName = (n: number): string => DESIRED_STATES[n] ?? `Unknown(${n})`;

/** A history entry's event text as Bacalhau's Event column has it: errors marked, the hint after. */
export function historyEventText(event: {
  readonly Message: string;
  readonly Details: Readonly<Record<string, string>>;
}): string {
  const text = event.Details.IsError === "true" ? `Error: ${event.Message}` : event.Message;
  return event.Details.Hint ? `${text} Hint: ${event.Details.Hint}` : text;
}

/** Who caused a history entry (its Details.Actor, `operator:alice`); `-` for an event stored without one. */
export const historyActor = (event: { readonly Details: Readonly<Record<string, string>> }): string =>
  event.Details.Actor || "-";

export const TERMINAL_JOB_STATES: ReadonlySet<string> = new Set(["Completed", "Failed", "Stopped"]);
