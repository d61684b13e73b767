import type { DomainEvent, EventEnvelope } from "../projections/event-envelope.ts";

/**
 * An entity's event as a workflow reacts to it: the envelope the processor host decoded once, through the entity
 * kind's codec, seen through what a workflow reads. `event.type` names the kind as well (type names are unique across
 * kinds), so a workflow switches on it and reads typed data; the raw stored event is not in view.
 */
export interface WorkflowInput {
  readonly event: DomainEvent;
  /** The entity whose stream holds the event (a node's, a job's or an execution's id). */
  readonly entityId: string;
  readonly stream: string;
  /** Its store position: what a read model must have folded for an answer as of this event. */
  readonly position: number;
  /** When it was recorded (ISO-8601). */
  readonly time: string;
}

/**
 * The envelope as a workflow's input, undefined when it holds no entity's event (a workflow's own steps, other
 * bookkeeping): those are inputs of nobody. Throws the envelope's CorruptEventError for an event its kind's schema
 * rejects (a workflow never acts on damaged data); a node event's data its fold does not read is checked when read.
 */
export function workflowInputOf(envelope: EventEnvelope): WorkflowInput | undefined {
  return holdsEntityEvent(envelope) ? envelope : undefined;
}

// The envelope itself is the input (no copy per event and workflow): its getters are WorkflowInput's fields.
const holdsEntityEvent = (envelope: EventEnvelope): envelope is EventEnvelope & { readonly event: DomainEvent } =>
  envelope.event !== undefined;
