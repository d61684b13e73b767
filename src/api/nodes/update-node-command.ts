import { Schema } from "effect";
import type { CommandContext } from "../../actors/command-context.ts";
import type { NodeManager } from "../../actors/node-manager.ts";
import type { OwnedCommand } from "../../cluster/owned-command.ts";
import { parseDuration } from "../../config/duration.ts";
import { badRequest } from "../../errors/shoal-error.ts";
import { NodePublicKey } from "../../events/catalog/node-events.ts";
import { MAX_LABELS, labelKeyProblem, labelsProblem } from "../../labels/label-rule.ts";
import { BasePutRequestFields } from "../bacalhau/base-put-request.ts";

/** Bacalhau's three actions, then Shoal's operator controls (docs/nodes.md). */
export const NODE_ACTIONS = [
  "approve",
  "reject",
  "delete",
  "cordon",
  "uncordon",
  "label",
  "preauthorize",
  "revoke-preauthorization",
  "drain",
  "undrain",
] as const;
type NodeAction = (typeof NODE_ACTIONS)[number];

const LabelKey = Schema.String.pipe(Schema.filter((key) => labelKeyProblem(key) ?? true));
const LabelKeys = Schema.Array(LabelKey).pipe(Schema.maxItems(MAX_LABELS));

/**
 * Bacalhau's PutNodeRequest ({NodeID, Action, Message}: approve, reject and delete as Bacalhau
 * clients send them), with Shoal's actions and the fields only they take. Message is the
 * operator's reason, recorded on the event.
 */
export const PutNodeRequest = Schema.Struct({
  Action: Schema.Literal(...NODE_ACTIONS).annotations({
    message: () => ({
      message: `must be one of ${NODE_ACTIONS.map((a) => JSON.stringify(a)).join(", ")}`,
      override: true,
    }),
  }),
  Message: Schema.optional(Schema.String.pipe(Schema.maxLength(1024))),
  NodeID: Schema.optional(Schema.String),
  /** label: labels to set or override (Kubernetes keys and values). */
  Labels: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.String }).pipe(
      Schema.filter((labels) => labelsProblem(labels) ?? true, { jsonSchema: { maxProperties: MAX_LABELS } }),
    ),
  ),
  /** label: labels to hide, the node's own too. */
  RemoveLabels: Schema.optional(LabelKeys),
  /** label: overrides to drop, so that the node's own value shows again. */
  ResetLabels: Schema.optional(LabelKeys),
  /** preauthorize: only a node joining with this NATS user nkey is let in on the strength of it. */
  PublicKey: Schema.optional(NodePublicKey),
  /**
   * drain: how long the drain may take, a Go duration ("10m", "1h30m"), as Bacalhau's timeouts; default 1h (Nomad's).
   */
  Deadline: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  /** drain: leave the node's daemon executions running (Nomad's IgnoreSystemJobs, kubectl's --ignore-daemonsets). */
  KeepDaemon: Schema.optional(Schema.Boolean),
  /** Namespace among them: nodes have none, and Bacalhau's server ignores it here too. */
  ...BasePutRequestFields,
});

/** Which fields each action takes beyond NodeID, Action and Message: any other is a mistake, refused. */
const ACTION_FIELDS: Record<NodeAction, readonly string[]> = {
  approve: [],
  reject: [],
  delete: [],
  cordon: [],
  uncordon: [],
  label: ["Labels", "RemoveLabels", "ResetLabels"],
  preauthorize: ["PublicKey"],
  "revoke-preauthorization": [],
  drain: ["Deadline", "KeepDaemon"],
  undrain: [],
};
const EXTRA_FIELDS = ["Labels", "RemoveLabels", "ResetLabels", "PublicKey", "Deadline", "KeepDaemon"] as const;

export function misplacedField(body: typeof PutNodeRequest.Type): string | undefined {
  const allowed = ACTION_FIELDS[body.Action];
  const wrong = EXTRA_FIELDS.find((f) => body[f] !== undefined && !allowed.includes(f));
  return wrong === undefined
    ? undefined
    : `${wrong} is not taken by Action ${JSON.stringify(body.Action)}${allowed.length > 0 ? ` (it takes ${allowed.join(", ")})` : ""}`;
}

/** Nomad's default drain deadline. */
const DEFAULT_DRAIN_DEADLINE_MS = 3_600_000;

/** A drain's deadline from its Go duration: positive, at most a year (misplacedField keeps it to Action "drain"). */
function drainSpec(body: typeof PutNodeRequest.Type): { deadlineMs: number; keepDaemon: boolean } {
  if (body.Deadline === undefined)
    return { deadlineMs: DEFAULT_DRAIN_DEADLINE_MS, keepDaemon: body.KeepDaemon ?? false };
  const ms = parseDuration(body.Deadline);
  if (ms === undefined || ms <= 0 || ms > 365 * 24 * 3_600_000)
    throw badRequest(
      `Deadline must be a positive Go duration of at most a year, like "10m" or "1h30m"; got ${JSON.stringify(body.Deadline)}`,
    );
  return { deadlineMs: ms, keepDaemon: body.KeepDaemon ?? false };
}

/**
 * PUT /nodes/:id, carried out by the node's partition owner (src/cluster/owner-commands.ts): the body as the route
 * took it, on the node's exact id (the receiving orchestrator resolved a prefix).
 */
export function updateNodeCommand(manager: NodeManager): OwnedCommand<typeof PutNodeRequest.Type> {
  const act = (
    body: typeof PutNodeRequest.Type,
    id: string,
    context: CommandContext,
    expectedRevision: number | undefined,
  ) => {
    switch (body.Action) {
      case "preauthorize":
        return manager.preauthorize(id, body.PublicKey, context, expectedRevision);
      case "revoke-preauthorization":
        return manager.revokePreauthorization(id, context, expectedRevision);
      case "drain":
        return manager.drain(id, drainSpec(body), context, expectedRevision);
      case "undrain":
        return manager.undrain(id, context, expectedRevision);
      case "label": {
        const change = { set: body.Labels ?? {}, remove: body.RemoveLabels ?? [], reset: body.ResetLabels ?? [] };
        return manager.operatorAction({ action: "label", ...change }, id, context, expectedRevision);
      }
      default:
        return manager.operatorAction({ action: body.Action }, id, context, expectedRevision);
    }
  };
  return {
    name: "update-node",
    args: PutNodeRequest,
    async run(nodeId, body, context, expectedRevision) {
      const misplaced = misplacedField(body);
      if (misplaced !== undefined) throw badRequest(misplaced);
      const result = await act(body, nodeId, context, expectedRevision);
      return {
        position: result.position,
        revision: result.revision,
        changed: result.events.length > 0,
        ...(result.note === undefined ? {} : { note: result.note }),
      };
    },
  };
}
