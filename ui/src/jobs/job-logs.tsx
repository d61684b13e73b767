import { useEffect, useRef, useState } from "preact/hooks";
import { readJobLogs } from "../api/job-endpoints.ts";
import type { LogMessage } from "../api/types.ts";
import { errorText } from "../common/format.tsx";
import { useSession } from "../session/session.tsx";

type LogState = "reading" | "following" | "ended" | "failed";

const STATUS: Readonly<Record<LogState, string>> = {
  reading: "Reading the output…",
  following: "Following the output as it is written…",
  ended: "End of the output.",
  failed: "The output could not be read:",
};

/**
 * The output of the job's latest execution, read once the job has one (`execution`): followed while the job runs,
 * and ending when the execution does; a finished job's is read whole. NDJSON over fetch, since a browser's WebSocket
 * cannot send the Authorization header. A new execution (a retry) starts the reading again.
 */
export function JobLogs(props: { readonly jobId: string; readonly execution: string; readonly running: boolean }) {
  const session = useSession();
  const [lines, setLines] = useState<readonly LogMessage["value"][]>([]);
  const [state, setState] = useState<LogState>("reading");
  const [error, setError] = useState<string | undefined>();
  const running = useRef(props.running);
  running.current = props.running;

  useEffect(() => {
    if (props.execution === "") return;
    const abort = new AbortController();
    const follow = running.current;
    const received: LogMessage["value"][] = [];
    setLines([]);
    setError(undefined);
    setState(follow ? "following" : "reading");
    readJobLogs(session.client, props.jobId, follow, abort.signal, (message) => {
      if (message.error !== undefined) {
        setError(message.error);
        setState("failed");
        return;
      }
      received.push(message.value);
      setLines([...received]);
    })
      .then(() => setState((s) => (s === "failed" ? s : "ended")))
      .catch((e: unknown) => {
        if (abort.signal.aborted) return;
        setError(errorText(e));
        setState("failed");
      });
    return () => abort.abort();
  }, [session, props.jobId, props.execution]);

  return (
    <section aria-labelledby="logs-title">
      <h2 id="logs-title">Logs</h2>
      {props.execution === "" ? (
        <p class="muted">No output yet: the job has not been placed on a node.</p>
      ) : (
        <>
          <p class="muted" role="status">
            {STATUS[state]} {error}
          </p>
          <pre class="logs" tabIndex={0} aria-label="Output">
            {lines.map((line, i) => (
              <span key={i} class={line.Type === 2 ? "stderr" : undefined}>
                {line.Line}
              </span>
            ))}
          </pre>
        </>
      )}
    </section>
  );
}
