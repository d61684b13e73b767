import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeFileAtomic } from "../../fs/write-file-atomic.ts";
import { credsFileText } from "./creds-file.ts";
import { newNkey } from "./nats-nkey.ts";
import type { NatsOperator } from "./nats-operator.ts";

export interface LeafServerOptions {
  /** The hub's leafnode URL as the leaf reaches it: `nats-leaf://host:port` (or `tls://…`). */
  readonly hub: string;
  /** Where the leaf listens for compute nodes, `host:port`. */
  readonly listen: string;
  /** The directory the configuration and its two credentials files go to (made 0700). */
  readonly dir: string;
  readonly serverName?: string;
}

export interface LeafServerFiles {
  readonly configFile: string;
  readonly shoalCreds: string;
  readonly systemCreds: string;
}

/**
 * A ready-to-run leaf nats-server: Shoal's operator and the accounts' JWTs as they stand now
 * (revocations included; `resolver: MEMORY`, as on the hub), so it verifies node logins and
 * holds every node to its own subjects itself; and two remotes to the hub with fresh keys and
 * restricted logins (NatsOperator.leafLogins). Written 0600: the credentials are secrets.
 */
export function writeLeafServerConfig(operator: NatsOperator, options: LeafServerOptions): LeafServerFiles {
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const shoalKey = newNkey("user");
  const systemKey = newNkey("user");
  const logins = operator.leafLogins(shoalKey.publicKey, systemKey.publicKey);
  const files: LeafServerFiles = {
    configFile: join(dir, "leaf.conf"),
    shoalCreds: join(dir, "leaf-shoal.creds"),
    systemCreds: join(dir, "leaf-system.creds"),
  };
  writeFileAtomic(files.shoalCreds, credsFileText(logins.shoal, shoalKey.seed), 0o600);
  writeFileAtomic(files.systemCreds, credsFileText(logins.system, systemKey.seed), 0o600);
  const config = {
    ...(options.serverName ? { server_name: options.serverName } : {}),
    listen: options.listen,
    pid_file: join(dir, "nats-server.pid"),
    ...operator.serverConfig(),
    leafnodes: {
      remotes: [
        { url: options.hub, credentials: files.shoalCreds, account: operator.account },
        { url: options.hub, credentials: files.systemCreds, account: operator.systemAccount },
      ],
    },
  };
  writeFileAtomic(files.configFile, `${JSON.stringify(config, null, 1)}\n`, 0o600);
  return files;
}
