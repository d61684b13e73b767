import {
  AUDIT_CHECKPOINTS_SUBJECT,
  EVENTS_STREAM,
  JOIN_INBOX_PREFIX,
  NODE_INBOX_ROOT,
  nodeInboxPrefix,
  nodeWorkSubjects,
} from "../subjects.ts";

/** nats-server's per-user permissions (its config's shape). */
export interface NatsPermissions {
  readonly publish?: { readonly allow?: readonly string[]; readonly deny?: readonly string[] };
  readonly subscribe?: { readonly allow?: readonly string[]; readonly deny?: readonly string[] };
}

export const ORCHESTRATOR_USER = "shoal-orchestrator";
export const JOIN_USER = "shoal-join";
export const EVENTS_READER_USER = "shoal-events-reader";
export const LEAF_USER = "shoal-leaf";
export const LEAF_SYSTEM_USER = "shoal-leaf-system";

/** The orchestrator's replies (JetStream acks, its own requests) stay out of readers' `_INBOX.>`. */
export const ORCHESTRATOR_INBOX_PREFIX = "_INBOX_ORCH";

/**
 * Everything, except destroying the cluster-event stream: downstream systems rely on it, and
 * only an operator editing the server's config could allow that.
 */
export const ORCHESTRATOR_PERMISSIONS: NatsPermissions = {
  publish: { allow: [">"], deny: [`$JS.API.STREAM.DELETE.${EVENTS_STREAM}`, `$JS.API.STREAM.PURGE.${EVENTS_STREAM}`] },
  subscribe: { allow: [">"] },
};

/** Holders of the join token may only ask to join (the request proves the token, src/transport/join-proof.ts). */
export const JOIN_PERMISSIONS: NatsPermissions = {
  publish: { allow: ["shoal.join.*"] },
  subscribe: { allow: [`${JOIN_INBOX_PREFIX}.>`] },
};

/** The orchestrator's system-account login gets its replies here: the one subject a leaf may answer on there. */
export const SYSTEM_INBOX_PREFIX = "_INBOX_SHOAL_SYS";
/**
 * Where the hub's own answers to the system login come back (account updates, LEAFZ): outside
 * SYSTEM_INBOX_PREFIX, where a leaf's system login may publish, so only the hub can answer there
 * (the hub does not even pass a leaf the interest in it).
 */
export const HUB_ANSWER_PREFIX = "_SHOAL_SYS_HUB";

/**
 * A leaf server's login to the hub for its nodes (the hub's view: publish = into the hub,
 * subscribe = out to the leaf). It carries what nodes and the join login may say (the leaf
 * holds each node to its own subjects) and the replies and work coming back; nothing else —
 * no cluster events, no JetStream, no orchestrator inbox.
 */
export const LEAF_PERMISSIONS: NatsPermissions = {
  publish: { allow: ["shoal.compute.*.*", "shoal.join.*"] },
  subscribe: { allow: [`${NODE_INBOX_ROOT}.>`, `${JOIN_INBOX_PREFIX}.>`, "shoal.work.>"] },
};

/**
 * A leaf server's system-account login: it receives account updates (revocations) and may
 * answer them; the leaf's own events (a connect per node) stay at the leaf.
 */
export const LEAF_SYSTEM_PERMISSIONS: NatsPermissions = {
  publish: { allow: [`${SYSTEM_INBOX_PREFIX}.>`] },
  subscribe: { allow: ["$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE"] },
};

/** A compute node speaks only for itself: its own protocol subjects, its own replies and work. */
export function nodePermissions(nodeId: string): NatsPermissions {
  return {
    publish: { allow: [`shoal.compute.${nodeId}.*`, `shoal.join.${nodeId}`] },
    subscribe: { allow: [`${nodeInboxPrefix(nodeId)}.>`, nodeWorkSubjects(nodeId)] },
  };
}

const S = EVENTS_STREAM;
/**
 * Downstream systems read cluster events (core subscription or JetStream consumers) and change
 * nothing else. They share this one login, so none may delete a consumer (another system's
 * durable); an operator removes stale ones with the orchestrator's login.
 */
export const EVENTS_READER_PERMISSIONS: NatsPermissions = {
  publish: {
    allow: [
      "$JS.API.INFO",
      "$JS.API.STREAM.NAMES",
      `$JS.API.STREAM.INFO.${S}`,
      `$JS.API.STREAM.MSG.GET.${S}`,
      `$JS.API.DIRECT.GET.${S}`,
      `$JS.API.DIRECT.GET.${S}.>`,
      `$JS.API.CONSUMER.CREATE.${S}`,
      `$JS.API.CONSUMER.CREATE.${S}.>`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${S}.*`,
      `$JS.API.CONSUMER.INFO.${S}.*`,
      `$JS.API.CONSUMER.LIST.${S}`,
      `$JS.API.CONSUMER.NAMES.${S}`,
      `$JS.API.CONSUMER.MSG.NEXT.${S}.*`,
      `$JS.ACK.${S}.>`,
      `$JS.FC.${S}.>`,
    ],
  },
  subscribe: { allow: ["_INBOX.>", "shoal.events.>", AUDIT_CHECKPOINTS_SUBJECT] },
};
