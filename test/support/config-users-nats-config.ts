import type { NatsPermissions } from "../../src/transport/nats-auth/nats-roles.ts";
import { operatorModeServerConfig, type NatsServerSettings } from "../../src/transport/nats-auth/nats-server-config.ts";

export type NatsUser =
  | { readonly user: string; readonly password: string; readonly permissions: NatsPermissions }
  | { readonly nkey: string; readonly permissions: NatsPermissions };

/**
 * A nats-server as an operator of an external NATS configures it for Shoal: plain config users
 * (passwords and node nkeys) in one JetStream account, as docs/security.md's authorization block shows.
 */
export function configUsersNatsConfig(settings: NatsServerSettings, users: readonly NatsUser[]): string {
  return operatorModeServerConfig(settings, { accounts: { SHOAL: { jetstream: "enabled", users } } });
}
