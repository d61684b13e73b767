import { readFileSync } from "node:fs";
import { ConfigError } from "../config/config-error.ts";
import type { ShoalConfig } from "../config/keys.ts";
import type { MetricsListen } from "../metrics/metrics-server.ts";

/** RFC 6750's b64token: what an Authorization: Bearer header can carry as it is. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The compute agent's `metrics` option from Compute.Metrics.*: none while the port is 0. The bearer token is read here,
 * at start: a token file that cannot be read, or a token a scraper could not send, stops the node before it serves.
 */
export function metricsListenOf(config: ShoalConfig): { readonly metrics?: MetricsListen } {
  const port = config["Compute.Metrics.Port"];
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`Compute.Metrics.Port: ${port} is not a port (0 to 65535; 0: no /metrics)`);
  const bearerToken = metricsBearerToken(config);
  if (port === 0) return {};
  return {
    metrics: { host: config["Compute.Metrics.Host"], port, ...(bearerToken === undefined ? {} : { bearerToken }) },
  };
}

function metricsBearerToken(config: ShoalConfig): string | undefined {
  const inline = config["Compute.Metrics.BearerToken"];
  const file = config["Compute.Metrics.BearerTokenFile"].trim();
  if (inline !== "" && file !== "")
    throw new ConfigError("Compute.Metrics.BearerToken and Compute.Metrics.BearerTokenFile: set one of them, not both");
  if (inline !== "") return checkedToken(inline, "Compute.Metrics.BearerToken");
  if (file === "") return undefined;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new ConfigError(`Compute.Metrics.BearerTokenFile: cannot read ${file}: ${(e as Error).message}`);
  }
  return checkedToken(text.trim(), `Compute.Metrics.BearerTokenFile (${file})`);
}

/** The value itself is never echoed: it is a secret. */
function checkedToken(token: string, source: string): string {
  if (token === "") throw new ConfigError(`${source}: the token is empty`);
  if (!BEARER_TOKEN.test(token))
    throw new ConfigError(
      `${source}: the token must be letters, digits and - . _ ~ + / (then = signs), as an Authorization: Bearer ` +
        "header carries it; no spaces",
    );
  return token;
}
