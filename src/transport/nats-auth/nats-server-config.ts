export interface NatsServerSettings {
  readonly host: string;
  readonly port: number;
  readonly serverName: string;
  readonly pidFile: string;
  readonly storeDir: string;
  /** JetStream's disk budget, so cluster events can never starve the event store of space. */
  readonly maxFileStoreBytes: number;
  /** Accept leaf servers on this port of `host` (0 or absent: none). */
  readonly leafNodePort?: number;
}

const hostPort = (host: string, port: number) => `${host.includes(":") ? `[${host}]` : host}:${port}`;

/**
 * A nats-server configuration: where it listens, JetStream, and its auth section. For Shoal's
 * own server that is what the operator says (src/transport/nats-jwt/nats-operator.ts
 * serverConfig): operator mode, no users at all.
 */
export function operatorModeServerConfig(settings: NatsServerSettings, auth: Record<string, unknown>): string {
  return JSON.stringify(
    {
      server_name: settings.serverName,
      listen: hostPort(settings.host, settings.port),
      pid_file: settings.pidFile,
      jetstream: { store_dir: settings.storeDir, max_file_store: settings.maxFileStoreBytes, max_memory_store: 64 * 1024 * 1024 },
      ...(settings.leafNodePort ? { leafnodes: { listen: hostPort(settings.host, settings.leafNodePort) } } : {}),
      ...auth,
    },
    null,
    1,
  );
}
