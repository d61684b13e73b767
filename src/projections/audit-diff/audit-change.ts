import type { RecordedEvent } from "../../events/store/event-store.ts";

/** A node's labels before and after one event that moved them: what was added, removed and changed. */
export interface LabelChange {
  readonly Added: Readonly<Record<string, string>>;
  readonly Removed: Readonly<Record<string, string>>;
  readonly Changed: Readonly<Record<string, { readonly From: string; readonly To: string }>>;
}

/** One change to a node or a job, from one stored event. */
export interface AuditChange {
  readonly Position: number;
  readonly Time: string;
  readonly Entity: string;
  /** joined, deleted, approved, rejected, labels, cordoned, …; submitted, completed, failed, stopped. */
  readonly Change: string;
  readonly Event: string;
  /** `type:id` of who caused it. */
  readonly By: string;
  readonly Reason: string;
  /** What the change was, where the event says more than its kind (labels, a drain's deadline, a failure's cause). */
  readonly Details?: Readonly<Record<string, unknown>>;
}

/** The node events a diff lists, and the change each is. */
export const NODE_CHANGES: Readonly<Record<string, string>> = {
  NodeRegistered: "joined",
  NodeDeleted: "deleted",
  NodeApproved: "approved",
  NodeRejected: "rejected",
  NodeCordoned: "cordoned",
  NodeUncordoned: "uncordoned",
  NodeLabelsSet: "labels",
  NodeInfoUpdated: "labels",
  NodeDrainStarted: "drain started",
  NodeDrainCompleted: "drain completed",
  NodeDrainDeadlineReached: "drain deadline reached",
  NodeUndrained: "undrained",
};

/** The job events a diff lists, and the change each is. */
export const JOB_CHANGES: Readonly<Record<string, string>> = {
  JobSubmitted: "submitted",
  JobCompleted: "completed",
  JobFailed: "failed",
  JobStopped: "stopped",
};

type Data = Readonly<Record<string, unknown>>;

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** The labels that differ between two sets of a node's effective labels. */
export function labelChange(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>) {
  const Added: Record<string, string> = {};
  const Removed: Record<string, string> = {};
  const Changed: Record<string, { From: string; To: string }> = {};
  for (const [key, value] of Object.entries(after)) {
    const was = before[key];
    if (was === undefined) Added[key] = value;
    else if (was !== value) Changed[key] = { From: was, To: value };
  }
  for (const [key, value] of Object.entries(before)) if (after[key] === undefined) Removed[key] = value;
  return { Added, Removed, Changed } satisfies LabelChange;
}

export const isEmptyLabelChange = (c: LabelChange): boolean =>
  Object.keys(c.Added).length + Object.keys(c.Removed).length + Object.keys(c.Changed).length === 0;

/**
 * The change one stored node or job event is, or undefined for an event a diff does not list. `labels`: the node's
 * effective labels before and after the event, for the events that may move them (a node info update that moved none
 * is no change).
 */
export function auditChangeOf(event: RecordedEvent, labels?: LabelChange): AuditChange | undefined {
  const node = NODE_CHANGES[event.type];
  const change = node ?? JOB_CHANGES[event.type];
  if (change === undefined) return undefined;
  const data = (event.data ?? {}) as Data;
  const actor = event.metadata.actor as { type?: unknown; id?: unknown } | undefined;
  const dash = event.stream.indexOf("-");
  const base = {
    Position: event.position,
    Time: event.time,
    Entity: dash === -1 ? event.stream : event.stream.slice(dash + 1),
    Change: change,
    Event: event.type,
    By: actor === undefined ? "" : `${String(actor.type ?? "")}:${String(actor.id ?? "")}`,
    // The reason the actor gave; events whose data carries the reason (a stop's, a failure's message) say it there.
    Reason: text(event.metadata.reason) ?? text(data.Reason) ?? text(data.Message) ?? "",
  };
  const details = detailsOf(event.type, data, labels);
  if (details === null) return undefined;
  return details === undefined ? base : { ...base, Details: details };
}

/** undefined: nothing more to say; null: the event changed nothing a diff lists. */
function detailsOf(type: string, data: Data, labels: LabelChange | undefined): Data | undefined | null {
  switch (type) {
    case "NodeRegistered":
      return { Membership: data.Membership, Lifecycle: data.Lifecycle };
    case "NodeApproved":
    case "NodeRejected":
      return { Previous: data.Previous };
    case "NodeDeleted":
      return { Membership: data.Membership };
    case "NodeLabelsSet":
    case "NodeInfoUpdated":
      if (labels === undefined || isEmptyLabelChange(labels)) return null;
      return labels as unknown as Data;
    case "NodeDrainStarted":
      return { Deadline: data.Deadline, KeepDaemon: data.KeepDaemon };
    case "NodeDrainDeadlineReached":
      return { Left: Array.isArray(data.Left) ? data.Left.length : 0 };
    case "NodeUndrained":
      return { Previous: data.Previous };
    case "JobSubmitted": {
      const job = (data.Job ?? {}) as Data;
      return { Name: job.Name, Type: job.Type };
    }
    case "JobFailed":
      return { Cause: data.Cause };
    case "JobStopped":
    case "JobCompleted":
      return { Previous: data.Previous };
    default:
      return undefined;
  }
}
