import { useEffect, useRef, useState } from "preact/hooks";
import type { ChainVerdict } from "../../../src/events/chain/verify-chain.ts";
import { ErrorAlert, errorText } from "../common/format.tsx";
import { useSession } from "../session/session.tsx";

interface Done {
  readonly verdict: ChainVerdict;
  /** verdictSummary's, written with the verdict: the verification code stays out of this page's own bundle. */
  readonly summary: string;
  readonly ownCheckpointsOnly: boolean;
}

type Run =
  | { readonly phase: "idle" }
  | { readonly phase: "running"; readonly through: number; readonly events: number }
  | ({ readonly phase: "done" } & Done);

/** The verification code, loaded on the first Verify (every page of the console would carry it otherwise). */
async function verification(keys: string, outside: string) {
  const chain = await import("./verify-over-api.ts");
  return { chain, trustedKeys: chain.trustedKeysOf(keys), kept: chain.outsideCheckpointsOf(outside) };
}

function Verdict(props: Done) {
  const { verdict } = props;
  const b = verdict.break;
  if (b === undefined)
    return (
      <div class="verdict ok" role="status">
        <p>
          <strong>Not altered:</strong> {props.summary}.
        </p>
        {props.ownCheckpointsOnly ? (
          <p class="hint">
            No trusted key and no checkpoint kept outside: the checkpoints checked are the store's own, under whatever
            key signed them.
          </p>
        ) : null}
      </div>
    );
  return (
    <div class="verdict broken" role="alert">
      <p>
        <strong>
          Broken at position {b.position}
          {b.stream === undefined ? "" : ` (${b.stream}@${b.revision})`}: {b.kind}
        </strong>
      </p>
      <p>{b.message}</p>
      <p>
        The chain held through position {verdict.through} ({verdict.events} events checked).
      </p>
    </div>
  );
}

/**
 * Whether the history was altered, worked out in the browser from the chain the API hands over (docs/audit.md,
 * Proof that the history was not altered): the server being audited gives no verdict of its own.
 */
export function ChainVerification() {
  const session = useSession();
  const [keys, setKeys] = useState("");
  const [outside, setOutside] = useState("");
  const [run, setRun] = useState<Run>({ phase: "idle" });
  const [error, setError] = useState<string | undefined>();
  const abort = useRef<AbortController | undefined>(undefined);
  useEffect(() => () => abort.current?.abort(), []);

  const start = async () => {
    setError(undefined);
    let loaded: Awaited<ReturnType<typeof verification>>;
    try {
      loaded = await verification(keys, outside);
    } catch (e) {
      setError(errorText(e));
      return;
    }
    const { chain, trustedKeys, kept } = loaded;
    const controller = new AbortController();
    abort.current = controller;
    setRun({ phase: "running", through: 0, events: 0 });
    try {
      const verdict = await chain.verifyOverApi(session.client, {
        trustedKeys,
        outside: kept,
        signal: controller.signal,
        onProgress: (through, events) => setRun({ phase: "running", through, events }),
      });
      const ownCheckpointsOnly = trustedKeys.length === 0 && kept.length === 0;
      setRun({ phase: "done", verdict, summary: chain.verdictSummary(verdict), ownCheckpointsOnly });
    } catch (e) {
      setRun({ phase: "idle" });
      setError(controller.signal.aborted ? "Stopped: no verdict." : errorText(e));
    }
  };

  return (
    <section aria-labelledby="verify-title">
      <h2 id="verify-title">Whether the history was altered</h2>
      <p class="hint">
        The orchestrator hands over its events as stored, their links and its signed checkpoints; this page recomputes
        every link and checks every signature itself, as <code>shoal audit verify</code> does. Give the audit key you
        trust and the checkpoints you kept outside Shoal to catch a log rewritten whole.
      </p>
      <form
        class="filters"
        aria-label="Verify the chain"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <label class="grow">
          Trusted keys (optional)
          <input
            value={keys}
            placeholder="the audit public key, base64url"
            onInput={(e) => setKeys(e.currentTarget.value)}
          />
        </label>
        <label class="grow">
          Checkpoints kept outside (optional)
          <textarea
            rows={2}
            value={outside}
            placeholder="as published on shoal.audit.checkpoints, one a line"
            onInput={(e) => setOutside(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={run.phase === "running"}>
          Verify
        </button>
        {run.phase === "running" ? (
          <button type="button" class="secondary" onClick={() => abort.current?.abort()}>
            Stop
          </button>
        ) : null}
      </form>
      <ErrorAlert message={error} />
      {run.phase === "running" ? (
        <p role="status">
          Checking… {run.events} events checked, through position {run.through}.
        </p>
      ) : run.phase === "done" ? (
        <Verdict verdict={run.verdict} summary={run.summary} ownCheckpointsOnly={run.ownCheckpointsOnly} />
      ) : null}
    </section>
  );
}
