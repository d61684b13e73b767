import type { Logger } from "pino";
import { readCaFile, readTlsFiles } from "../config/api-tls-files.ts";
import type { ShoalConfig } from "../config/keys.ts";
import { existsSync } from "node:fs";
import { apiCaPath } from "../security/tls/api-ca-path.ts";
import { loadOrCreateNatsTls } from "../security/tls/generated-api-tls.ts";
import { natsServerUrls } from "../transport/nats-server-urls.ts";
import { natsTlsOptions, type NatsClientTls } from "../transport/nats-tls.ts";
import { StartupError } from "../errors/startup-error.ts";

type NatsTlsConfig = Pick<
  ShoalConfig,
  | "DataDir"
  | "Orchestrator.Host"
  | "Orchestrator.NATS.URL"
  | "Orchestrator.NATS.TLS.Disable"
  | "Orchestrator.NATS.TLS.CertFile"
  | "Orchestrator.NATS.TLS.KeyFile"
  | "Orchestrator.NATS.TLS.CACert"
  | "Orchestrator.NATS.TLS.ClientCertFile"
  | "Orchestrator.NATS.TLS.ClientKeyFile"
>;

/** The embedded nats-server's TLS: the files its config names, and how the orchestrator's own clients trust it. */
export interface EmbeddedNatsTls {
  readonly certFile: string;
  readonly keyFile: string;
  /** The generated CA compute nodes trust (absent: an own certificate, Orchestrator.NATS.TLS.CertFile). */
  readonly caPath: string | undefined;
  readonly client: NatsClientTls;
  /** For the generated certificate: a new one when it is due (as at start), saying why; else undefined. */
  renewIfDue(now: Date): string | undefined;
}

const TRUST_FIX = "set Orchestrator.NATS.TLS.CACert to the CA that signed its certificate";

/** The orchestrator's trust as a client: Orchestrator.NATS.TLS.CACert, and its client certificate for mutual TLS. */
function clientTrust(config: NatsTlsConfig, extraCas: readonly string[], required: boolean): NatsClientTls {
  const caFile = config["Orchestrator.NATS.TLS.CACert"].trim();
  const certFile = config["Orchestrator.NATS.TLS.ClientCertFile"].trim();
  const keyFile = config["Orchestrator.NATS.TLS.ClientKeyFile"].trim();
  const cas = [...extraCas, ...(caFile === "" ? [] : [readCaFile(caFile, "Orchestrator.NATS.TLS.CACert")])];
  const client =
    certFile === ""
      ? undefined
      : readTlsFiles(certFile, keyFile, {
          cert: "Orchestrator.NATS.TLS.ClientCertFile",
          key: "Orchestrator.NATS.TLS.ClientKeyFile",
        });
  const fixes = {
    clientCertFix:
      client === undefined
        ? "set Orchestrator.NATS.TLS.ClientCertFile and ClientKeyFile to a client certificate from the CA the " +
          "server trusts for clients (its tls ca_file; shoal tls issue --client makes one)"
        : `Orchestrator.NATS.TLS.ClientCertFile ${certFile} is not one it accepts: give a client certificate from ` +
          "the CA the server trusts for clients (its tls ca_file)",
    trustFix: caFile === "" ? TRUST_FIX : `Orchestrator.NATS.TLS.CACert ${caFile} is not its issuer: ${TRUST_FIX}`,
    plainFix:
      "turn its TLS on, or drop Orchestrator.NATS.TLS.CACert and ClientCertFile/ClientKeyFile (and a tls:// URL)",
  };
  if (!required && cas.length === 0 && client === undefined) return fixes;
  return {
    options: natsTlsOptions({
      cas,
      ...(client === undefined ? {} : { clientCert: client.cert, clientKey: client.key }),
    }),
    ...fixes,
  };
}

/** How the orchestrator speaks TLS to an external NATS (Orchestrator.NATS.URL); tls:// asks for it. */
export function externalNatsTls(config: NatsTlsConfig): NatsClientTls {
  try {
    const asked = natsServerUrls(config["Orchestrator.NATS.URL"]).some((url) => /^tls:\/\//i.test(url));
    return clientTrust(config, [], asked);
  } catch (e) {
    throw new StartupError(`cannot use NATS TLS: ${(e as Error).message}`);
  }
}

/**
 * TLS for the embedded nats-server, on by default as the API's HTTPS is: Orchestrator.NATS.TLS.CertFile/KeyFile when
 * given, else a certificate signed by the CA serve generates under DataDir (the API's, so clients trust one file);
 * undefined with Orchestrator.NATS.TLS.Disable. The orchestrator's own connections trust that CA, or
 * Orchestrator.NATS.TLS.CACert for an own certificate.
 */
export function embeddedNatsTls(config: NatsTlsConfig, logger: Logger, now: Date): EmbeddedNatsTls | undefined {
  if (config["Orchestrator.NATS.TLS.Disable"]) {
    logger.warn(
      "Orchestrator.NATS.TLS.Disable is set: compute nodes and leaf servers speak to the embedded nats-server in clear",
    );
    return undefined;
  }
  try {
    const certFile = config["Orchestrator.NATS.TLS.CertFile"].trim();
    if (certFile !== "") {
      const keyFile = config["Orchestrator.NATS.TLS.KeyFile"].trim();
      const { certificate } = readTlsFiles(certFile, keyFile, {
        cert: "Orchestrator.NATS.TLS.CertFile",
        key: "Orchestrator.NATS.TLS.KeyFile",
      });
      const fields = { certFile, subject: certificate.subject.replaceAll("\n", ", "), validTo: certificate.validTo };
      if (new Date(certificate.validTo).getTime() <= now.getTime())
        logger.warn(fields, "the embedded nats-server's certificate has ended: compute nodes refuse it");
      else logger.info(fields, "the embedded nats-server serves TLS with Orchestrator.NATS.TLS.CertFile");
      const client = clientTrust(config, [], true);
      return { certFile, keyFile, caPath: undefined, client, renewIfDue: () => undefined };
    }
    const tls = loadOrCreateNatsTls(config.DataDir, config["Orchestrator.Host"], now);
    logger.info(
      { caFile: tls.caPath, caSha256: tls.caFingerprint, reason: tls.serverIssued },
      tls.serverIssued === undefined
        ? "the embedded nats-server serves TLS with the generated CA's certificate"
        : "issued the embedded nats-server a certificate from the generated CA; compute nodes trust the CA file",
    );
    const ca = readCaFile(tls.caPath, "the generated CA");
    return {
      certFile: tls.certPath,
      keyFile: tls.keyPath,
      caPath: tls.caPath,
      client: clientTrust(config, [ca], true),
      renewIfDue: (at) => loadOrCreateNatsTls(config.DataDir, config["Orchestrator.Host"], at).serverIssued,
    };
  } catch (e) {
    // GeneratedTlsError (the CA's files) or ConfigError (the given files): either way serve cannot start.
    throw new StartupError(`cannot serve the embedded NATS over TLS: ${(e as Error).message}`);
  }
}

/**
 * What a leaf server trusts in the embedded nats-server's leafnode port (`shoal leaf config`): undefined when it
 * speaks plain NATS (Orchestrator.NATS.TLS.Disable); the generated CA, which serve wrote under DataDir; for an own
 * certificate, Orchestrator.NATS.TLS.CACert or else the leaf machine's system CAs.
 */
export function hubTlsForLeaves(config: NatsTlsConfig): { readonly caPem?: string } | undefined {
  if (config["Orchestrator.NATS.TLS.Disable"]) return undefined;
  if (config["Orchestrator.NATS.TLS.CertFile"].trim() !== "") {
    const caFile = config["Orchestrator.NATS.TLS.CACert"].trim();
    return caFile === "" ? {} : { caPem: readCaFile(caFile, "Orchestrator.NATS.TLS.CACert") };
  }
  const caFile = apiCaPath(config.DataDir);
  if (!existsSync(caFile))
    throw new StartupError(
      `the orchestrator's NATS serves TLS, but its generated CA ${caFile} is not there yet: start the orchestrator ` +
        "(shoal serve) with this DataDir first, or give Orchestrator.NATS.TLS.Disable as the orchestrator has it",
    );
  return { caPem: readCaFile(caFile, "the orchestrator's generated CA") };
}
