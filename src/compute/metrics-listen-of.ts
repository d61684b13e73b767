import { ConfigError } from "../config/config-error.ts";
import type { ShoalConfig } from "../config/keys.ts";
import type { MetricsListen } from "../metrics/metrics-server.ts";

/** The compute agent's `metrics` option from Compute.Metrics.*: none while the port is 0. */
export function metricsListenOf(config: ShoalConfig): { readonly metrics?: MetricsListen } {
  const port = config["Compute.Metrics.Port"];
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`Compute.Metrics.Port: ${port} is not a port (0 to 65535; 0: no /metrics)`);
  return port === 0 ? {} : { metrics: { host: config["Compute.Metrics.Host"], port } };
}
