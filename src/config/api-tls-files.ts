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

/**
 * API.TLS.CertFile and API.TLS.KeyFile, read and checked: a PEM certificate, a PEM private key, and the key is the
 * certificate's. The key's text is never part of an error.
 */
export function readTlsFiles(certFile: string, keyFile: string): TlsFiles {
  const cert = read(certFile, "API.TLS.CertFile");
  const key = read(keyFile, "API.TLS.KeyFile");
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`API.TLS.CertFile ${certFile} holds no PEM certificate`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`API.TLS.KeyFile ${keyFile} holds no PEM private key (an encrypted key is not supported)`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(
      `API.TLS.KeyFile ${keyFile} is not the key of the certificate in API.TLS.CertFile ${certFile} ` +
        `(${certificate.subject.replaceAll("\n", ", ")})`,
    );
  }
  return { cert, key, certificate };
}

/** The TLS keys' combinations that make sense: both files or neither, and no file while TLS is off. */
export function checkTlsKeys(config: {
  readonly "API.TLS.CertFile": string;
  readonly "API.TLS.KeyFile": string;
  readonly "API.TLS.Disable": boolean;
}): void {
  const certFile = config["API.TLS.CertFile"].trim();
  const keyFile = config["API.TLS.KeyFile"].trim();
  if (certFile === "" && keyFile === "") return;
  if (config["API.TLS.Disable"]) {
    throw new ConfigError("API.TLS.Disable is set together with API.TLS.CertFile/KeyFile: keep one or the other");
  }
  if (certFile === "" || keyFile === "") {
    const [given, missing] = certFile === "" ? ["KeyFile", "CertFile"] : ["CertFile", "KeyFile"];
    throw new ConfigError(
      `API.TLS.${given} is set but API.TLS.${missing} is not: give both, or neither to have serve generate a certificate`,
    );
  }
  readTlsFiles(certFile, keyFile);
}
