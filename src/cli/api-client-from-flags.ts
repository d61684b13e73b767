import { ApiClient } from "./api-client.ts";
import { resolveCredentials } from "./api-credentials.ts";
import { configFrom } from "./config-flags.ts";
import { UsageError } from "./usage-error.ts";

/** The flags every command that calls the REST API takes (see NODE_HELP). */
export const API_OPTIONS = {
  "api-host": { type: "string" },
  "api-port": { type: "string" },
  "api-key": { type: "string" },
  username: { type: "string" },
  password: { type: "string" },
} as const;

export interface ApiFlagValues {
  readonly c?: string[];
  readonly config?: string[];
  readonly "api-host"?: string;
  readonly "api-port"?: string;
  readonly "api-key"?: string;
  readonly username?: string;
  readonly password?: string;
}

/** A client for the API these flags (and the config, env and this machine's admin key) point at. */
export function apiClientFrom(values: ApiFlagValues): ApiClient {
  const config = configFrom(values);
  const host = values["api-host"] ?? (config["API.Host"] === "0.0.0.0" ? "127.0.0.1" : config["API.Host"]);
  const port = values["api-port"] ?? String(config["API.Port"]);
  if (!/^\d{1,5}$/.test(port)) throw new UsageError(`--api-port must be a port number, got ${port}`);
  const credentials = resolveCredentials({ flags: values, env: process.env, dataDir: config.DataDir, host });
  return new ApiClient(`http://${host.includes(":") ? `[${host}]` : host}:${port}`, credentials);
}
