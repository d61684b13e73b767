import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { issueCertificate } from "../../src/security/tls/issue-certificate.ts";

const YEAR = 365 * 24 * 3600 * 1000;

export interface TestCa {
  readonly pem: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

/** A CA made with Shoal's certificate writer (10 years from `from`), named "Test CA". */
export function testCa(from = new Date()): TestCa {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const pem = issueCertificate({
    commonName: "Test CA",
    publicKey,
    privateKey,
    notBefore: from,
    notAfter: new Date(from.getTime() + 10 * YEAR),
    ca: true,
  });
  return { pem, privateKey, publicKey };
}

/** A server certificate `ca` signs for `names`, valid from `from` to `to`, with its key. */
export function testServerCertificate(
  ca: TestCa,
  names: readonly string[],
  validity: { readonly from: Date; readonly to: Date },
): { readonly pem: string; readonly privateKey: KeyObject; readonly publicKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const pem = issueCertificate({
    commonName: "Test server",
    publicKey,
    issuer: { commonName: "Test CA", privateKey: ca.privateKey, publicKey: ca.publicKey },
    notBefore: validity.from,
    notAfter: validity.to,
    ca: false,
    names,
  });
  return { pem, privateKey, publicKey };
}
