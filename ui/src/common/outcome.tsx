/** What an operator's write did (ok), or why it was refused. */
export interface Outcome {
  readonly ok: boolean;
  readonly text: string;
}

/** What the last write did, or why it was refused. */
export function UpdateOutcome(props: { readonly outcome: Outcome | undefined }) {
  if (props.outcome === undefined) return null;
  return (
    <span class={props.outcome.ok ? "ok" : "error"} role={props.outcome.ok ? "status" : "alert"}>
      {props.outcome.text}
    </span>
  );
}
