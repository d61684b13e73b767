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
  /** Serve TLS with this certificate (and any intermediates) and key, on the client and leaf ports; absent: plain. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
}

/**
 * Seconds a client has to finish its login after connecting (nats-server's default: 2). When a
 * whole fleet reconnects at once (an orchestrator restart), logins queue behind each other on the
 * server's and the nodes' CPUs; dropped at 2 s, most of them had to start over, and the storm with them.
 */
export const LOGIN_TIMEOUT_SECONDS = 10;

/**
 * Seconds a client has for its TLS handshake (nats-server's default: 2). A fleet reconnecting at once queues its
 * handshakes as it queues its logins, so it gets the same time.
 */
const TLS_TIMEOUT_SECONDS = LOGIN_TIMEOUT_SECONDS;

const hostPort = (host: string, port: number) => `${host.includes(":") ? `[${host}]` : host}:${port}`;

/**
 * A nats-server configuration: where it listens, JetStream, and its auth section. For Shoal's
 * own server that is what the operator says (src/transport/nats-jwt/nats-operator.ts
 * serverConfig): operator mode, no users at all.
 */
export function operatorModeServerConfig(settings: NatsServerSettings, auth: Record<string, unknown>): string {
  const tls =
    settings.tls === undefined
      ? undefined
      : { cert_file: settings.tls.certFile, key_file: settings.tls.keyFile, timeout: TLS_TIMEOUT_SECONDS };
  return JSON.stringify(
    {
      server_name: settings.serverName,
      listen: hostPort(settings.host, settings.port),
      pid_file: settings.pidFile,
      jetstream: {
        store_dir: settings.storeDir,
        max_file_store: settings.maxFileStoreBytes,
        max_memory_store: 64 * 1024 * 1024,
      },
      ...(tls ? { tls } : {}),
      ...(settings.leafNodePort
        ? { leafnodes: { listen: hostPort(settings.host, settings.leafNodePort), ...(tls ? { tls } : {}) } }
        : {}),
      // Only the login deadline: operator mode admits no users here (the operator's JWTs do).
      authorization: { timeout: LOGIN_TIMEOUT_SECONDS },
      ...auth,
    },
    null,
    1,
  );
}
