import type { NatsPermissions } from "./nats-roles.ts";

export type NatsUser =
  | { readonly user: string; readonly password: string; readonly permissions: NatsPermissions }
  | { readonly nkey: string; readonly permissions: NatsPermissions };

export interface NatsServerSettings {
  readonly host: string;
  readonly port: number;
  readonly serverName: string;
  readonly pidFile: string;
  readonly storeDir: string;
  /** JetStream's disk budget, so cluster events can never starve the event store of space. */
  readonly maxFileStoreBytes: number;
}

export const SHOAL_ACCOUNT = "SHOAL";

/**
 * The embedded nats-server's whole configuration. nats-server reads JSON as its config syntax,
 * so values are JSON-escaped and no secret can break out of its string.
 */
export function natsServerConfig(settings: NatsServerSettings, users: readonly NatsUser[]): string {
  return JSON.stringify(
    {
      server_name: settings.serverName,
      listen: `${settings.host.includes(":") ? `[${settings.host}]` : settings.host}:${settings.port}`,
      pid_file: settings.pidFile,
      jetstream: { store_dir: settings.storeDir, max_file_store: settings.maxFileStoreBytes, max_memory_store: 64 * 1024 * 1024 },
      accounts: { [SHOAL_ACCOUNT]: { jetstream: "enabled", users } },
    },
    null,
    1,
  );
}

/**
 * The node keys a config written by natsServerConfig admits, as [nodeId, nkey]: what the
 * server let in before a restart, kept until the store says otherwise. Unreadable: none.
 */
export function nodeBindingsIn(configText: string): [string, string][] {
  try {
    const config = JSON.parse(configText) as { accounts?: Record<string, { users?: { nkey?: unknown; permissions?: NatsPermissions }[] }> };
    return (config.accounts?.[SHOAL_ACCOUNT]?.users ?? []).flatMap((user) => {
      const joinSubject = user.permissions?.publish?.allow?.find((s) => s.startsWith("shoal.join."));
      return typeof user.nkey === "string" && joinSubject !== undefined ? [[joinSubject.slice("shoal.join.".length), user.nkey] as [string, string]] : [];
    });
  } catch {
    return [];
  }
}

/**
 * The embedded nats-server's configuration in operator mode: where it listens, JetStream, and
 * what the operator says (src/transport/nats-jwt/nats-operator.ts serverConfig) — no users at all.
 */
export function operatorModeServerConfig(settings: NatsServerSettings, operatorConfig: Record<string, unknown>): string {
  return JSON.stringify(
    {
      server_name: settings.serverName,
      listen: `${settings.host.includes(":") ? `[${settings.host}]` : settings.host}:${settings.port}`,
      pid_file: settings.pidFile,
      jetstream: { store_dir: settings.storeDir, max_file_store: settings.maxFileStoreBytes, max_memory_store: 64 * 1024 * 1024 },
      ...operatorConfig,
    },
    null,
    1,
  );
}
