import { ConfigError } from "../config/config-error.ts";
import { formatExactBytes } from "../config/byte-size.ts";
import type { ShoalConfig } from "../config/keys.ts";
import type { RetentionRule } from "../compute/publisher/results-to-remove.ts";

const MIN_PERIOD_MS = 60_000;

/**
 * The node's retention rule for its published results, from Compute.Publishers.Local.*; a rule that would remove a
 * result before anyone could fetch it is a ConfigError naming the key.
 */
export function resultRetentionFromConfig(config: ShoalConfig): RetentionRule {
  const periodMs = config["Compute.Publishers.Local.RetentionPeriod"];
  if (periodMs > 0 && periodMs < MIN_PERIOD_MS)
    throw new ConfigError(
      `Compute.Publishers.Local.RetentionPeriod: at least 1m (results would be removed before they could be ` +
        `downloaded), or 0s for no age limit; got ${periodMs}ms`,
    );
  const maxTotalBytes = config["Compute.Publishers.Local.MaxTotalBytes"];
  const maxResult = config["Compute.Publishers.MaxResultBytes"];
  if (maxTotalBytes > 0 && maxTotalBytes < maxResult)
    throw new ConfigError(
      `Compute.Publishers.Local.MaxTotalBytes: ${formatExactBytes(maxTotalBytes)} is less than one execution may ` +
        `publish (Compute.Publishers.MaxResultBytes, ${formatExactBytes(maxResult)}): a result could be removed as ` +
        "soon as it is published. Raise it, or set 0 for no limit",
    );
  return { periodMs, maxTotalBytes };
}
