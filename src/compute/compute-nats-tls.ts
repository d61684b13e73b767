import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { readCaFile } from "../config/api-tls-files.ts";
import type { ShoalConfig } from "../config/keys.ts";
import { apiCaPath } from "../security/tls/api-ca-path.ts";
import { natsTlsOptions, type NatsClientTls } from "../transport/nats-tls.ts";

type ComputeTlsConfig = Pick<ShoalConfig, "Compute.TLS.CACert" | "Compute.TLS.Insecure" | "Compute.Orchestrators">;

/** Where an orchestrator on this machine keeps the CA it generated: `serve`'s DataDir and devstack's under it. */
export const localOrchestratorDirs = (config: Pick<ShoalConfig, "DataDir">): string[] => [
  config.DataDir,
  join(config.DataDir, "devstack"),
];

const TRUST_FIX =
  "set Compute.TLS.CACert to the CA that signed it " +
  "(an orchestrator's own is <DataDir>/credentials/tls/ca.crt on its machine)";

/** Nodes log in with their own keys; a client certificate would be one more secret per node to hand out and renew. */
const CLIENT_CERT_FIX =
  "compute nodes present no client certificate: let them connect to a server (or port) that does not verify " +
  "clients' certificates; their logins are their own keys (docs/security.md, NATS: TLS)";

/**
 * How a compute node (`shoal compute`, each of `shoal sim`'s) speaks TLS to the orchestrators' NATS: trusting
 * Compute.TLS.CACert, or checking nothing with Compute.TLS.Insecure (loudly logged), or else trusting the CA an
 * orchestrator generated on this machine (under one of `localDataDirs`) when the server speaks TLS. tls:// URLs ask
 * for TLS whatever the server offers; otherwise the server decides, as nats.js does.
 */
export function computeNatsTls(
  config: ComputeTlsConfig,
  localDataDirs: readonly string[],
  logger: Logger,
): NatsClientTls {
  const plainFix =
    "its TLS is off (Orchestrator.NATS.TLS.Disable); turn it on, or give this node nats:// URLs without " +
    "Compute.TLS.CACert and Compute.TLS.Insecure";
  const fixes = { plainFix, clientCertFix: CLIENT_CERT_FIX };
  if (config["Compute.TLS.Insecure"]) {
    logger.warn(
      "Compute.TLS.Insecure is set: the NATS server's certificate is not checked; anyone on the way can pose as the " +
        "orchestrator, read this node's login and give it work",
    );
    return { options: natsTlsOptions({ insecure: true }), trustFix: TRUST_FIX, ...fixes };
  }
  const caFile = config["Compute.TLS.CACert"].trim();
  if (caFile !== "") {
    const options = natsTlsOptions({ cas: [readCaFile(caFile, "Compute.TLS.CACert")] });
    return { options, trustFix: `Compute.TLS.CACert ${caFile} is not its issuer: ${TRUST_FIX}`, ...fixes };
  }
  const asked = config["Compute.Orchestrators"].some((url) => /^tls:\/\//i.test(url.trim()));
  const found = localDataDirs.map(apiCaPath).filter((file) => existsSync(file));
  const cas = found.map((file) => readCaFile(file, "the orchestrator's generated CA"));
  if (cas.length > 0) logger.debug({ caFiles: found }, "trusting this machine's generated CA for NATS");
  if (cas.length === 0 && !asked) return { trustFix: TRUST_FIX, ...fixes };
  return { options: natsTlsOptions({ cas }), optional: !asked, trustFix: TRUST_FIX, ...fixes };
}
