import { type ContainerConfinement, confinementProblem } from "../compute/executor/container-confinement.ts";
import { ConfigError } from "../config/config-error.ts";
import type { ShoalConfig } from "../config/keys.ts";

/**
 * How the node confines its containers, from its Compute.Docker keys; a value it cannot apply is a
 * ConfigError naming the key. Capabilities are taken as Docker spells them or as `chown`,
 * `CAP_CHOWN` (capabilities(7)).
 */
export function confinementFromConfig(config: ShoalConfig): ContainerConfinement {
  const pidsLimit = config["Compute.Docker.PidsLimit"];
  if (pidsLimit < 1) throw new ConfigError(`Compute.Docker.PidsLimit: must be at least 1, got ${pidsLimit}`);
  const named = config["Compute.Docker.Capabilities"].map((c) => c.toUpperCase().replace(/^CAP_/, ""));
  const readOnlyRootFilesystem = config["Compute.Docker.ReadOnlyRootFilesystem"];
  const confinement = { pidsLimit, capabilities: [...new Set(named)], readOnlyRootFilesystem };
  const problem = confinementProblem(confinement);
  if (problem !== undefined) throw new ConfigError(`Compute.Docker.Capabilities: ${problem}`);
  return confinement;
}
