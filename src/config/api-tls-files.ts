import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError } from "./config-error.ts";

export interface TlsFiles {
  /** The certificate file's PEM: the server's certificate, then any intermediates. */
  readonly cert: string;
  readonly key: string;
  readonly certificate: X509Certificate;
}

function read(file: string, key: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw new ConfigError(
      `${key} ${file} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/** The config keys naming a certificate file and its key's file, for errors. */
export interface TlsFileKeys {
  readonly cert: string;
  readonly key: string;
}

const API_FILES: TlsFileKeys = { cert: "API.TLS.CertFile", key: "API.TLS.KeyFile" };

/**
 * A certificate file and its key's file (API.TLS.CertFile and API.TLS.KeyFile unless `keys` names others), read and
 * checked: a PEM certificate, a PEM private key, and the key is the certificate's. The key's text is never part of an
 * error.
 */
export function readTlsFiles(certFile: string, keyFile: string, keys: TlsFileKeys = API_FILES): TlsFiles {
  const cert = read(certFile, keys.cert);
  const key = read(keyFile, keys.key);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`${keys.cert} ${certFile} holds no PEM certificate`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`${keys.key} ${keyFile} holds no PEM private key (an encrypted key is not supported)`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(
      `${keys.key} ${keyFile} is not the key of the certificate in ${keys.cert} ${certFile} ` +
        `(${certificate.subject.replaceAll("\n", ", ")})`,
    );
  }
  return { cert, key, certificate };
}

/** A CA file (Compute.TLS.CACert, Orchestrator.NATS.TLS.CACert): its PEM, refused when it holds no certificate. */
export function readCaFile(file: string, key: string): string {
  const pem = read(file, key);
  try {
    new X509Certificate(pem);
  } catch {
    throw new ConfigError(`${key} ${file} holds no PEM certificate`);
  }
  return pem;
}

/** Both files or neither (`neither` says what neither means, for the error); true when both are given. */
function checkPair(certFile: string, keyFile: string, keys: TlsFileKeys, neither: string): boolean {
  if (certFile === "" && keyFile === "") return false;
  if (certFile === "" || keyFile === "") {
    const [given, missing] = certFile === "" ? [keys.key, keys.cert] : [keys.cert, keys.key];
    throw new ConfigError(`${given} is set but ${missing} is not: give both, or neither ${neither}`);
  }
  readTlsFiles(certFile, keyFile, keys);
  return true;
}

/** The TLS keys' combinations that make sense: both files or neither, and no file while TLS is off. */
export function checkTlsKeys(config: {
  readonly "API.TLS.CertFile": string;
  readonly "API.TLS.KeyFile": string;
  readonly "API.TLS.Disable": boolean;
  readonly "Orchestrator.NATS.TLS.CertFile": string;
  readonly "Orchestrator.NATS.TLS.KeyFile": string;
  readonly "Orchestrator.NATS.TLS.Disable": boolean;
  readonly "Orchestrator.NATS.TLS.ClientCertFile": string;
  readonly "Orchestrator.NATS.TLS.ClientKeyFile": string;
  readonly "Compute.TLS.CACert": string;
  readonly "Compute.TLS.Insecure": boolean;
}): void {
  for (const prefix of ["API.TLS", "Orchestrator.NATS.TLS"] as const) {
    const certFile = config[`${prefix}.CertFile`].trim();
    const keyFile = config[`${prefix}.KeyFile`].trim();
    if (config[`${prefix}.Disable`] && (certFile !== "" || keyFile !== ""))
      throw new ConfigError(`${prefix}.Disable is set together with ${prefix}.CertFile/KeyFile: keep one or the other`);
    const keys = { cert: `${prefix}.CertFile`, key: `${prefix}.KeyFile` };
    checkPair(certFile, keyFile, keys, "to have serve generate a certificate");
  }
  checkPair(
    config["Orchestrator.NATS.TLS.ClientCertFile"].trim(),
    config["Orchestrator.NATS.TLS.ClientKeyFile"].trim(),
    { cert: "Orchestrator.NATS.TLS.ClientCertFile", key: "Orchestrator.NATS.TLS.ClientKeyFile" },
    "(only for a NATS that verifies client certificates)",
  );
  if (config["Compute.TLS.Insecure"] && config["Compute.TLS.CACert"].trim() !== "")
    throw new ConfigError(
      "Compute.TLS.Insecure is set together with Compute.TLS.CACert: Insecure checks no certificate; keep one",
    );
}
