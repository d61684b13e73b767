import { EVENTS_STREAM, JOIN_INBOX_PREFIX, nodeInboxPrefix, nodeWorkSubjects } from "../subjects.ts";

/** nats-server's per-user permissions (its config's shape). */
export interface NatsPermissions {
  readonly publish?: { readonly allow?: readonly string[]; readonly deny?: readonly string[] };
  readonly subscribe?: { readonly allow?: readonly string[]; readonly deny?: readonly string[] };
}

export const ORCHESTRATOR_USER = "shoal-orchestrator";
export const JOIN_USER = "shoal-join";
export const EVENTS_READER_USER = "shoal-events-reader";

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
  subscribe: { allow: ["_INBOX.>", "shoal.events.>"] },
};
