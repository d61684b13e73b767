import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { formatBytes } from "../../../src/cli/format-bytes.ts";
import type { ActorRef, Resources } from "../api/types.ts";

/** A moment in the reader's local time, with the exact RFC 3339 instant on hover. */
export function Time(props: { readonly at: string | null | undefined }) {
  if (props.at === null || props.at === undefined) return <span class="muted">—</span>;
  return (
    <time dateTime={props.at} title={props.at}>
      {new Date(props.at).toLocaleString()}
    </time>
  );
}

export const actorName = (actor: ActorRef): string => `${actor.type}:${actor.id}`;

/** A size as the CLI shows it (one rounding for both). */
export const bytes = (n: number | undefined): string => (n === undefined ? "—" : formatBytes(n));

export const resourcesText = (r: Resources | undefined): string =>
  r === undefined
    ? "—"
    : [
        `CPU ${r.CPU ?? 0}`,
        `memory ${bytes(r.Memory ?? 0)}`,
        `disk ${bytes(r.Disk ?? 0)}`,
        ...(r.GPU ? [`GPU ${r.GPU}`] : []),
      ].join(", ");

export function Labels(props: { readonly labels: Readonly<Record<string, string>> }) {
  const entries = Object.entries(props.labels);
  if (entries.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="labels">
      {entries.map(([key, value]) => (
        <li key={key}>
          <code>
            {key}={value}
          </code>
        </li>
      ))}
    </ul>
  );
}

function duration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return h > 0 ? `${h}h ${m}m ${sec}s` : m > 0 ? `${m}m ${sec}s` : `${sec}s`;
}

/** The time left until `at`, ticking every second (the browser's clock against the server's instant). */
export function Countdown(props: { readonly at: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const left = Date.parse(props.at) - now;
  return <span class="countdown">{left > 0 ? `${duration(left)} left` : "deadline passed"}</span>;
}

/** What went wrong, announced to screen readers; nothing when all is well. */
export function ErrorAlert(props: { readonly message: string | undefined }) {
  if (props.message === undefined) return null;
  return (
    <p class="error" role="alert">
      {props.message}
    </p>
  );
}

/** An error as the page shows it: the API's message, else the error's own. */
export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** A page's facts as a term → value list. */
export function Facts(props: { readonly rows: readonly (readonly [string, ComponentChildren])[] }) {
  return (
    <dl class="facts">
      {props.rows.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
