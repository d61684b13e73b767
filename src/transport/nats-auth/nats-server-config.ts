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
