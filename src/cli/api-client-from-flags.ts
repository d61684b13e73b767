import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ShoalConfig } from "../config/keys.ts";
import { reachableHost, urlHost } from "../net/reachable-host.ts";
import { apiCaPath } from "../security/tls/api-ca-path.ts";
import { ApiClient } from "./api-client.ts";
import { resolveCredentials } from "./api-credentials.ts";
import { configFrom } from "./config-flags.ts";
import type { TlsTrust } from "./tls-trust.ts";
import { UsageError } from "./usage-error.ts";

/** The flags every command that calls the REST API takes (help/shared-options.ts describes them); TLS: Bacalhau's. */
export const API_OPTIONS = {
  "api-host": { type: "string" },
  "api-port": { type: "string" },
  "api-key": { type: "string" },
  username: { type: "string" },
  password: { type: "string" },
  "api-tls": { type: "boolean" },
  "api-tls-ca-cert": { type: "string" },
  "ca-cert": { type: "string" },
  "api-tls-insecure": { type: "boolean" },
  insecure: { type: "boolean" },
} as const;

export interface ApiFlagValues {
  readonly c?: string[];
  readonly config?: string[];
  readonly "api-host"?: string;
  readonly "api-port"?: string;
  readonly "api-key"?: string;
  readonly username?: string;
  readonly password?: string;
  readonly "api-tls"?: boolean;
  readonly "api-tls-ca-cert"?: string;
  readonly "ca-cert"?: string;
  readonly "api-tls-insecure"?: boolean;
  readonly insecure?: boolean;
}

export interface ApiEndpoint {
  readonly baseUrl: string;
  readonly host: string;
  /** Absent: plain HTTP. */
  readonly tls: TlsTrust | undefined;
}

const INSECURE_WARNING =
  "WARNING: --insecure: the API's certificate is not checked; anyone on the way can read and change what is sent, " +
  "credentials included\n";

function readCa(file: string, source: string): { pem: string; source: string } {
  let pem: string;
  try {
    pem = readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`${source} ${file} cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new UsageError(`${source} ${file} holds no PEM certificate`);
  return { pem, source: `${source} ${file}` };
}

/**
 * Where the API is and how to talk to it. The scheme: the one --api-host (or API.Host) spells, else HTTPS when any
 * TLS flag is given, else plain HTTP only when API.TLS.Disable is set: TLS by default, as `serve` serves it. Trusted:
 * the system's CAs, a CA given with --api-tls-ca-cert, and the CAs `serve` and `devstack` generated under DataDir on
 * this machine (a CA only vouches for what its own key signed, so it is trusted for any host).
 */
export function apiEndpointFrom(
  values: ApiFlagValues,
  config: ShoalConfig,
  env: Readonly<Record<string, string | undefined>>,
  warn: (text: string) => void,
): ApiEndpoint {
  const rawHost = values["api-host"] ?? config["API.Host"];
  const spelled = /^(https?):\/\/(.*)$/i.exec(rawHost.trim());
  let host = rawHost.trim();
  let urlPort: string | undefined;
  if (spelled) {
    let url: URL;
    try {
      url = new URL(rawHost.trim());
    } catch {
      throw new UsageError(`--api-host ${rawHost} is not a URL`);
    }
    if (url.pathname !== "/" || url.search !== "" || url.username !== "")
      throw new UsageError(`--api-host ${rawHost}: give the scheme, host and port only`);
    host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    urlPort = url.port === "" ? undefined : url.port;
  }
  host = reachableHost(host);
  const port = values["api-port"] ?? urlPort ?? String(config["API.Port"]);
  if (!/^\d{1,5}$/.test(port)) throw new UsageError(`--api-port must be a port number, got ${port}`);
  const insecure = values.insecure === true || values["api-tls-insecure"] === true;
  const caFlag = values["api-tls-ca-cert"] ?? values["ca-cert"];
  const caEnv = env.SHOAL_API_TLS_CACERT?.trim() || undefined;
  const askedTls = values["api-tls"] === true || insecure || caFlag !== undefined;
  const scheme = spelled?.[1]?.toLowerCase() ?? (askedTls || !config["API.TLS.Disable"] ? "https" : "http");
  if (scheme === "http" && askedTls)
    throw new UsageError(
      `--api-host ${rawHost} is plain HTTP, but a TLS flag (--api-tls, --ca-cert, --insecure) is given`,
    );
  const baseUrl = `${scheme}://${urlHost(host)}:${port}`;
  if (scheme === "http") return { baseUrl, host, tls: undefined };
  if (insecure) {
    warn(INSECURE_WARNING);
    return { baseUrl, host, tls: { cas: [], insecure: true } };
  }
  const cas = [];
  if (caFlag !== undefined) cas.push(readCa(caFlag, values["api-tls-ca-cert"] ? "--api-tls-ca-cert" : "--ca-cert"));
  else if (caEnv !== undefined) cas.push(readCa(caEnv, "SHOAL_API_TLS_CACERT"));
  for (const file of [apiCaPath(config.DataDir), apiCaPath(join(config.DataDir, "devstack"))]) {
    if (existsSync(file)) cas.push(readCa(file, "this machine's generated CA"));
  }
  return { baseUrl, host, tls: { cas, insecure: false } };
}

/** A client for the API these flags (and the config, env and this machine's admin key and CA) point at. */
export function apiClientFrom(values: ApiFlagValues): ApiClient {
  const config = configFrom(values);
  const endpoint = apiEndpointFrom(values, config, process.env, (text) => process.stderr.write(text));
  const credentials = resolveCredentials({
    flags: values,
    env: process.env,
    dataDir: config.DataDir,
    host: endpoint.host,
  });
  return new ApiClient(endpoint.baseUrl, credentials, endpoint.tls);
}
