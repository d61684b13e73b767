import { createPrivateKey, generateKeyPairSync, X509Certificate, type KeyObject } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import { writeFileAtomic } from "../../fs/write-file-atomic.ts";
import { issueCertificate, USAGE_OIDS, type CertificateUsage } from "./issue-certificate.ts";

export const DAY = 24 * 60 * 60 * 1000;
export const CA_VALIDITY = 10 * 365 * DAY;
export const LEAF_VALIDITY = 365 * DAY;
/** A certificate with less than this left is issued again. */
export const RENEW_BEFORE = 30 * DAY;
/** Certificates start a little in the past: a client whose clock is behind still accepts them. */
const BACKDATE = 60 * 60 * 1000;

/** A certificate and its key, as read from or written to their two PEM files. */
export interface CertificatePair {
  readonly certificate: X509Certificate;
  readonly certPem: string;
  readonly key: KeyObject;
  readonly keyPem: string;
}

/** The pair in these files (none: neither is there); throws naming the file for half a pair or a mismatch. */
export function readPair(certPath: string, keyPath: string): CertificatePair | undefined {
  const certThere = existsSync(certPath);
  const keyThere = existsSync(keyPath);
  if (!certThere && !keyThere) return undefined;
  if (!certThere || !keyThere)
    throw new Error(`${certThere ? keyPath : certPath} is missing beside ${certThere ? certPath : keyPath}`);
  try {
    const certPem = readFileSync(certPath, "utf8");
    const keyPem = readFileSync(keyPath, "utf8");
    const certificate = new X509Certificate(certPem);
    const key = createPrivateKey(keyPem);
    if (!certificate.checkPrivateKey(key)) throw new Error(`${keyPath} is not the key of ${certPath}`);
    return { certificate, certPem, key, keyPem };
  } catch (e) {
    throw new Error(`cannot use ${certPath}: ${(e as Error).message}`);
  }
}

/** The common name a certificate's subject gives (a child names its issuer so). */
export const commonNameOf = (certificate: X509Certificate): string => /^CN=(.*)$/m.exec(certificate.subject)?.[1] ?? "";

/** A certificate's key: EC P-256, or RSA (2048 bits) where the server takes no other (KurrentDB). */
export type KeyType = "ec" | "rsa";

/** A new key and its certificate: a CA signing itself (no issuer), or one the issuer signs. */
export function newPair(
  commonName: string,
  now: Date,
  validity: number,
  issuer: CertificatePair | undefined,
  names: readonly string[],
  usages: readonly CertificateUsage[] = ["server"],
  keyType: KeyType = "ec",
): CertificatePair {
  const { publicKey, privateKey } =
    keyType === "rsa"
      ? generateKeyPairSync("rsa", { modulusLength: 2048 })
      : generateKeyPairSync("ec", { namedCurve: "P-256" });
  const certPem = issueCertificate({
    commonName,
    publicKey,
    ...(issuer
      ? {
          issuer: {
            commonName: commonNameOf(issuer.certificate),
            privateKey: issuer.key,
            publicKey: issuer.certificate.publicKey,
          },
        }
      : { privateKey }),
    notBefore: new Date(now.getTime() - BACKDATE),
    // Never past its CA's end: a chain is only as good as its shortest link, and a renewal would be due too late.
    notAfter: new Date(
      Math.min(now.getTime() + validity, issuer ? new Date(issuer.certificate.validTo).getTime() : Infinity),
    ),
    ca: issuer === undefined,
    usages,
    names,
  });
  const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  return { certificate: new X509Certificate(certPem), certPem, key: privateKey, keyPem };
}

/** The key first (0600), then the certificate (0644), each replaced whole. */
export function writePair(pair: CertificatePair, certPath: string, keyPath: string): void {
  writeFileAtomic(keyPath, pair.keyPem, 0o600);
  writeFileAtomic(certPath, pair.certPem, 0o644);
}

/**
 * Why a kept certificate no longer does (none: it still does): not the CA's, near its end, another subject or kind of
 * key, a name or use missing.
 */
export function unfit(kept: CertificatePair, ca: CertificatePair, wanted: LeafWanted, now: Date): string | undefined {
  const { names, usages = ["server"], keyType = "ec" } = wanted;
  if (!kept.certificate.checkIssued(ca.certificate) || !kept.certificate.verify(ca.certificate.publicKey))
    return "it was not issued by the CA";
  if (commonNameOf(kept.certificate) !== wanted.commonName)
    return `it is for ${JSON.stringify(commonNameOf(kept.certificate))}, not ${JSON.stringify(wanted.commonName)}`;
  if (kept.key.asymmetricKeyType !== keyType) return `its key is not ${keyType === "rsa" ? "an RSA" : "an EC"} key`;
  if (new Date(kept.certificate.validTo).getTime() - now.getTime() < RENEW_BEFORE)
    return `it ends on ${new Date(kept.certificate.validTo).toISOString()}`;
  const uses = kept.certificate.keyUsage ?? [];
  const lacking = usages.filter((u) => !uses.includes(USAGE_OIDS[u]));
  if (lacking.length > 0) return `it is not for a TLS ${lacking.join(" or ")}`;
  const missing = names.filter((n) =>
    isIP(n) !== 0
      ? kept.certificate.checkIP(n) === undefined
      : kept.certificate.checkHost(n, { wildcards: false }) === undefined,
  );
  return missing.length > 0 ? `it does not cover ${missing.join(", ")}` : undefined;
}

/** What a certificate the CA signs is to be: its subject, the hosts it covers and what it is for. */
export interface LeafWanted {
  readonly commonName: string;
  readonly names: readonly string[];
  readonly usages?: readonly CertificateUsage[];
  readonly keyType?: KeyType;
}

/**
 * The certificate in these files when it still does, else a new one the CA signs, written over them; `issued`
 * says why a new one was needed. A certificate is no trust anchor: whatever is wrong with the kept one, a new one
 * replaces it.
 */
export function keptOrIssued(
  certPath: string,
  keyPath: string,
  ca: CertificatePair,
  wanted: LeafWanted,
  now: Date,
): { readonly pair: CertificatePair; readonly issued: string | undefined } {
  let kept: CertificatePair | undefined;
  let issued: string | undefined;
  try {
    kept = readPair(certPath, keyPath);
    issued = kept === undefined ? "there was none" : unfit(kept, ca, wanted, now);
  } catch (e) {
    issued = (e as Error).message;
  }
  if (issued === undefined && kept !== undefined) return { pair: kept, issued };
  const pair = newPair(wanted.commonName, now, LEAF_VALIDITY, ca, wanted.names, wanted.usages, wanted.keyType);
  writePair(pair, certPath, keyPath);
  return { pair, issued };
}
