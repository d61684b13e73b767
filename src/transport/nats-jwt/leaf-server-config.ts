import { join, posix, resolve } from "node:path";
import { StartupError } from "../../errors/startup-error.ts";
import { privateDirectory } from "../../fs/private-directory.ts";
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
  /**
   * The directory the files will be in on the leaf's machine, an absolute POSIX path: the
   * paths in leaf.conf name it. Default: `dir`, as an absolute path here.
   */
  readonly leafDir?: string;
  readonly serverName?: string;
  /**
   * The hub serves TLS on its leafnode port: the leaf's remotes speak TLS, trusting `caPem` (written beside the
   * credentials as hub-ca.crt) or, without it, the leaf machine's system CAs.
   */
  readonly hubTls?: { readonly caPem?: string };
}

export interface LeafServerFiles {
  readonly configFile: string;
  readonly shoalCreds: string;
  readonly systemCreds: string;
  /** leaf.conf's path on the leaf's machine (under leafDir). */
  readonly leafConfigFile: string;
  /** The hub's CA, when leaf.conf names one. */
  readonly hubCa?: string;
  /** `dir`'s mode before it was made 0700, if it existed with another. */
  readonly dirModeWas?: number;
}

const FILES = {
  configFile: "leaf.conf",
  shoalCreds: "leaf-shoal.creds",
  systemCreds: "leaf-system.creds",
  hubCa: "hub-ca.crt",
} as const;

/**
 * A ready-to-run leaf nats-server: Shoal's operator and the accounts' JWTs as they stand now
 * (revocations included; `resolver: MEMORY`, as on the hub), so it verifies node logins and
 * holds every node to its own subjects itself; and two remotes to the hub with fresh keys and
 * restricted logins (NatsOperator.leafLogins). Written 0600 in a 0700 directory: the
 * credentials are secrets.
 */
export function writeLeafServerConfig(operator: NatsOperator, options: LeafServerOptions): LeafServerFiles {
  const dir = resolve(options.dir);
  const leafDir = options.leafDir === undefined ? dir : leafDirPath(options.leafDir);
  const dirModeWas = privateDirectory(dir, "--out", "shoal-leaf");
  const shoalKey = newNkey("user");
  const systemKey = newNkey("user");
  const logins = operator.leafLogins(shoalKey.publicKey, systemKey.publicKey);
  const here = (name: string) => join(dir, name);
  // nats-server reads these paths on the leaf's machine, which may not be this one.
  const there = (name: string) => posix.join(leafDir, name);
  writeFileAtomic(here(FILES.shoalCreds), credsFileText(logins.shoal, shoalKey.seed), 0o600);
  writeFileAtomic(here(FILES.systemCreds), credsFileText(logins.system, systemKey.seed), 0o600);
  const caPem = options.hubTls?.caPem;
  if (caPem !== undefined) writeFileAtomic(here(FILES.hubCa), caPem, 0o644);
  const tls = options.hubTls === undefined ? {} : { tls: caPem === undefined ? {} : { ca_file: there(FILES.hubCa) } };
  const config = {
    ...(options.serverName ? { server_name: options.serverName } : {}),
    listen: options.listen,
    pid_file: there("nats-server.pid"),
    ...operator.serverConfig(),
    leafnodes: {
      remotes: [
        { url: options.hub, credentials: there(FILES.shoalCreds), account: operator.account, ...tls },
        { url: options.hub, credentials: there(FILES.systemCreds), account: operator.systemAccount, ...tls },
      ],
    },
  };
  writeFileAtomic(here(FILES.configFile), `${JSON.stringify(config, null, 1)}\n`, 0o600);
  return {
    configFile: here(FILES.configFile),
    shoalCreds: here(FILES.shoalCreds),
    systemCreds: here(FILES.systemCreds),
    leafConfigFile: there(FILES.configFile),
    ...(caPem === undefined ? {} : { hubCa: here(FILES.hubCa) }),
    ...(dirModeWas === undefined ? {} : { dirModeWas }),
  };
}

/**
 * An absolute POSIX path, normalised; nats-server resolves a relative one against its working directory, unknown here.
 */
export function leafDirPath(path: string): string {
  if (!posix.isAbsolute(path) || /[\0\n\r]/.test(path))
    throw new StartupError(
      `--leaf-dir: an absolute path on the leaf's machine (such as /etc/nats/leaf), got ${JSON.stringify(path)}`,
    );
  const normal = posix.normalize(path);
  return normal.length > 1 && normal.endsWith("/") ? normal.slice(0, -1) : normal;
}
