import type { Logger } from "pino";
import { readTlsFiles } from "../config/api-tls-files.ts";
import type { ShoalConfig } from "../config/keys.ts";
import { GeneratedTlsError, loadOrCreateApiTls } from "../security/tls/generated-api-tls.ts";
import { StartupError } from "./services.ts";

/** What the API serves HTTPS with: the certificate chain and its key, in PEM. */
export interface ApiTlsMaterial {
  readonly cert: string;
  readonly key: string;
}

export interface ResolvedApiTls {
  /** Absent: API.TLS.Disable, plain HTTP. */
  readonly material: ApiTlsMaterial | undefined;
  /** The generated CA clients trust, when Shoal generated the certificate. */
  readonly caPath: string | undefined;
  /** Reads the certificate again (the files replaced, or the generated one renewed), for SIGHUP. */
  reload(): ApiTlsMaterial | undefined;
  /**
   * For a generated certificate: a new one when the kept one is due (near its end, or no longer covering the API's
   * names), by the same rule as at start, so a long-running serve never serves an ended certificate; else undefined.
   */
  renewIfDue(): ApiTlsMaterial | undefined;
}

function configured(certFile: string, keyFile: string, logger: Logger, now: Date): ApiTlsMaterial {
  const { cert, key, certificate } = readTlsFiles(certFile, keyFile);
  const ends = new Date(certificate.validTo);
  const fields = { certFile, subject: certificate.subject.replaceAll("\n", ", "), validTo: ends.toISOString() };
  if (ends.getTime() <= now.getTime()) logger.warn(fields, "the API's certificate has ended: clients refuse it");
  else logger.info(fields, "the API serves HTTPS with API.TLS.CertFile");
  return { cert, key };
}

function generated(config: ShoalConfig, logger: Logger, now: Date): { material: ApiTlsMaterial; caPath: string } {
  const tls = loadOrCreateApiTls(config.DataDir, config["API.Host"], now);
  logger.info(
    { caFile: tls.caPath, caSha256: tls.caFingerprint },
    tls.caCreated
      ? "generated a CA for the API's HTTPS (API.TLS.CertFile is empty); clients trust the CA file"
      : "the API serves HTTPS with the generated CA's certificate (API.TLS.CertFile is empty)",
  );
  if (tls.serverIssued !== undefined && !tls.caCreated)
    logger.info({ reason: tls.serverIssued }, "issued a new server certificate for the API");
  if (tls.caExpiresSoon !== undefined)
    logger.warn(
      { caFile: tls.caPath, validTo: tls.caExpiresSoon },
      "the API's generated CA ends soon and is never replaced by itself: remove its directory to generate a new one",
    );
  return { material: { cert: tls.cert, key: tls.key }, caPath: tls.caPath };
}

/**
 * HTTPS by default (the architecture's "TLS end to end"): API.TLS.CertFile/KeyFile when given, else a certificate
 * signed by a CA generated under DataDir; plain HTTP only with API.TLS.Disable.
 */
export function resolveApiTls(config: ShoalConfig, logger: Logger, now: () => Date): ResolvedApiTls {
  if (config["API.TLS.Disable"]) {
    logger.warn("API.TLS.Disable is set: the API serves plain HTTP, credentials cross the network in clear");
    return { material: undefined, caPath: undefined, reload: () => undefined, renewIfDue: () => undefined };
  }
  const certFile = config["API.TLS.CertFile"].trim();
  const keyFile = config["API.TLS.KeyFile"].trim();
  const load = (): { material: ApiTlsMaterial; caPath: string | undefined } => {
    try {
      return certFile !== ""
        ? { material: configured(certFile, keyFile, logger, now()), caPath: undefined }
        : generated(config, logger, now());
    } catch (e) {
      if (e instanceof GeneratedTlsError) throw new StartupError(`cannot serve the API over HTTPS: ${e.message}`);
      throw e;
    }
  };
  const first = load();
  const renewIfDue = (): ApiTlsMaterial | undefined => {
    if (certFile !== "") return undefined;
    const tls = loadOrCreateApiTls(config.DataDir, config["API.Host"], now());
    if (tls.serverIssued === undefined) return undefined;
    logger.info({ reason: tls.serverIssued }, "issued a new server certificate for the API; new connections get it");
    return { cert: tls.cert, key: tls.key };
  };
  return { ...first, reload: () => load().material, renewIfDue };
}
