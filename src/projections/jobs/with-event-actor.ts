import type { HistoryEvent } from "../../../machines/job/history-event.ts";

/**
 * A history entry's event with who caused it (`Details.Actor`, `<type>:<id>` as the node history and the
 * event metadata name them) and why (`Details.Reason`), from the stored event's metadata. Bacalhau's
 * models.JobHistory has no field for them and the swagger's models.Event.Details is a map of strings, so
 * they go there. The reason is added only where it says something the entry does not: not when the
 * Message already holds it, and never in place of a Reason the entry has of its own (a stop's). Metadata
 * without an actor or a reason (an event stored by an older Shoal, a damaged one) adds nothing.
 */
export function withEventActor(event: HistoryEvent, metadata: Readonly<Record<string, unknown>>): HistoryEvent {
  const actor = actorText(metadata.actor);
  const reason = metadata.reason;
  const addReason =
    typeof reason === "string" &&
    reason !== "" &&
    !event.Message.includes(reason) &&
    event.Details.Reason === undefined;
  if (actor === undefined && !addReason) return event;
  return {
    ...event,
    Details: {
      ...(actor === undefined ? {} : { Actor: actor }),
      ...(addReason ? { Reason: reason } : {}),
      ...event.Details,
    },
  };
}

function actorText(actor: unknown): string | undefined {
  if (typeof actor !== "object" || actor === null) return undefined;
  const { type, id } = actor as { readonly type?: unknown; readonly id?: unknown };
  return typeof type === "string" && type !== "" && typeof id === "string" && id !== "" ? `${type}:${id}` : undefined;
}
