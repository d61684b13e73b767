import { useState } from "preact/hooks";
import { stopJob } from "../api/job-endpoints.ts";
import { errorText } from "../common/format.tsx";
import { UpdateOutcome, type Outcome } from "../common/outcome.tsx";
import { useSession } from "../session/session.tsx";

/** Stops the job with a reason (its state message and its history's Reason); shown only with write:job. */
export function StopJob(props: { readonly jobId: string; readonly onDone: () => void }) {
  const session = useSession();
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  if (!session.can("write:job")) return null;

  const stop = async () => {
    setBusy(true);
    setOutcome(undefined);
    try {
      await stopJob(session.client, props.jobId, reason.trim());
      setReason("");
      setOutcome({ ok: true, text: "Stop: done" });
      props.onDone();
    } catch (e) {
      setOutcome({ ok: false, text: errorText(e) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="node-actions"
      aria-label={`Stop ${props.jobId}`}
      onSubmit={(e) => {
        e.preventDefault();
        void stop();
      }}
    >
      <label>
        Reason
        <input
          aria-label={`Reason for stopping ${props.jobId}`}
          value={reason}
          maxLength={1024}
          placeholder="recorded in the history"
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </label>
      <button type="submit" class="danger" disabled={busy}>
        Stop job
      </button>
      <UpdateOutcome outcome={outcome} />
    </form>
  );
}
