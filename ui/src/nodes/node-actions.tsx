import { useState } from "preact/hooks";
import type { NodeAction } from "../api/endpoints.ts";
import type { NodeState } from "../api/types.ts";
import { useSession } from "../session/session.tsx";
import { UpdateOutcome } from "../common/outcome.tsx";
import { useNodeUpdate } from "./use-node-update.tsx";

const LABELS: Readonly<Record<Exclude<NodeAction, "label">, string>> = {
  approve: "Approve",
  reject: "Reject",
  cordon: "Cordon",
  uncordon: "Uncordon",
  drain: "Drain",
  undrain: "Undrain",
};

/** The actions that make sense in the node's state (the API refuses the others, saying why). */
export function actionsFor(node: NodeState): Exclude<NodeAction, "label">[] {
  if (node.Membership === "PENDING") return ["approve", "reject"];
  if (node.Membership === "REJECTED") return ["approve"];
  return [
    node.Cordoned ? "uncordon" : "cordon",
    ...(node.Drain === undefined ? (["drain"] as const) : (["undrain"] as const)),
  ];
}

/**
 * The operator's actions on one node, each with the reason the history records. Shown only to a caller with
 * write:node; nothing here is sent until a button is pressed.
 */
export function NodeActions(props: {
  readonly node: NodeState;
  readonly only?: readonly Exclude<NodeAction, "label">[];
  readonly onDone: () => void;
}) {
  const session = useSession();
  const [reason, setReason] = useState("");
  const [deadline, setDeadline] = useState("1h");
  const { busy, submit, outcome } = useNodeUpdate(props.node.Info.NodeID, props.onDone);
  if (!session.can("write:node")) return null;
  const id = props.node.Info.NodeID;
  const actions = actionsFor(props.node).filter((a) => props.only === undefined || props.only.includes(a));
  if (actions.length === 0) return null;

  const run = (action: Exclude<NodeAction, "label">) =>
    submit(
      {
        Action: action,
        ...(reason.trim() === "" ? {} : { Message: reason.trim() }),
        ...(action === "drain" ? { Deadline: deadline.trim() } : {}),
      },
      `${LABELS[action]}: done`,
      () => setReason(""),
    );

  return (
    <div class="node-actions" role="group" aria-label={`Actions on ${id}`}>
      <label>
        Reason
        <input
          aria-label={`Reason for ${id}`}
          value={reason}
          maxLength={1024}
          placeholder="recorded in the history"
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </label>
      {actions.includes("drain") ? (
        <label>
          Drain deadline
          <input
            aria-label={`Drain deadline for ${id}`}
            class="short"
            value={deadline}
            placeholder="1h"
            onInput={(e) => setDeadline(e.currentTarget.value)}
          />
        </label>
      ) : null}
      {actions.map((action) => (
        <button
          key={action}
          type="button"
          class={action === "reject" || action === "drain" ? "danger" : undefined}
          disabled={busy}
          aria-label={`${LABELS[action]} ${id}`}
          onClick={() => void run(action)}
        >
          {LABELS[action]}
        </button>
      ))}
      <UpdateOutcome outcome={outcome} />
    </div>
  );
}
