import { useState } from "preact/hooks";
import { ApiError } from "../api/client.ts";
import { updateNode } from "../api/endpoints.ts";
import type { Outcome } from "../common/outcome.tsx";
import { useSession } from "../session/session.tsx";

type UpdateBody = Parameters<typeof updateNode>[2];

/** An operator's write on one node, with its outcome for the form that made it (busy while it runs). */
export function useNodeUpdate(nodeId: string, onDone: () => void) {
  const session = useSession();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>();

  /** Sends the body; on success `done` is said (unless the API says the action changed nothing) and `after` runs. */
  const submit = async (body: UpdateBody, done: string, after: () => void) => {
    setBusy(true);
    setOutcome(undefined);
    try {
      const res = await updateNode(session.client, nodeId, body);
      after();
      setOutcome({ ok: true, text: res.Message ?? done });
      onDone();
    } catch (e) {
      setOutcome({ ok: false, text: e instanceof ApiError ? e.message : String(e) });
    } finally {
      setBusy(false);
    }
  };
  const refuse = (text: string) => setOutcome({ ok: false, text });
  return { busy, submit, refuse, outcome };
}
