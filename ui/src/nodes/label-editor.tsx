import { useState } from "preact/hooks";
import { useSession } from "../session/session.tsx";
import { UpdateOutcome } from "../common/outcome.tsx";
import { useNodeUpdate } from "./use-node-update.tsx";

const words = (text: string): string[] => text.split(/[\s,]+/).filter((w) => w !== "");

/** `k=v k2=v2` → {k: v, k2: v2}; a word without `=` is named (the API checks keys and values). */
function parseLabels(text: string): Record<string, string> | string {
  const labels: Record<string, string> = {};
  for (const word of words(text)) {
    const eq = word.indexOf("=");
    if (eq <= 0) return `expected key=value, got ${word}`;
    labels[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return labels;
}

/**
 * The operator's labels on one node (`shoal node label`): set or override, hide (the node's own too), reset to the
 * node's own value; with a reason. Only for a caller with write:node.
 */
export function LabelEditor(props: { readonly nodeId: string; readonly onDone: () => void }) {
  const session = useSession();
  const [set, setSet] = useState("");
  const [hide, setHide] = useState("");
  const [reset, setReset] = useState("");
  const [reason, setReason] = useState("");
  const { busy, submit, refuse, outcome } = useNodeUpdate(props.nodeId, props.onDone);
  if (!session.can("write:node")) return null;
  const id = props.nodeId;

  const apply = async (e: Event) => {
    e.preventDefault();
    const labels = parseLabels(set);
    if (typeof labels === "string") return refuse(labels);
    if (Object.keys(labels).length + words(hide).length + words(reset).length === 0)
      return refuse("nothing to change: give labels to set, hide or reset");
    await submit(
      {
        Action: "label",
        ...(Object.keys(labels).length === 0 ? {} : { Labels: labels }),
        ...(words(hide).length === 0 ? {} : { RemoveLabels: words(hide) }),
        ...(words(reset).length === 0 ? {} : { ResetLabels: words(reset) }),
        ...(reason.trim() === "" ? {} : { Message: reason.trim() }),
      },
      "Labels: done",
      () => {
        setSet("");
        setHide("");
        setReset("");
        setReason("");
      },
    );
  };

  return (
    <form class="label-editor" aria-label={`Labels of ${id}`} onSubmit={(e) => void apply(e)}>
      <label>
        Set labels
        <input value={set} placeholder="zone=edge gpu=a100" onInput={(e) => setSet(e.currentTarget.value)} />
      </label>
      <label>
        Hide labels
        <input value={hide} placeholder="rack" onInput={(e) => setHide(e.currentTarget.value)} />
      </label>
      <label>
        Reset labels to the node's own
        <input value={reset} placeholder="zone" onInput={(e) => setReset(e.currentTarget.value)} />
      </label>
      <label>
        Reason
        <input
          aria-label={`Reason for the labels of ${id}`}
          value={reason}
          maxLength={1024}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </label>
      <div class="buttons">
        <button type="submit" disabled={busy}>
          Apply labels
        </button>
        <UpdateOutcome outcome={outcome} />
      </div>
    </form>
  );
}
