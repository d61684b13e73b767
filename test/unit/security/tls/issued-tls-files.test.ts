import { spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { RENEW_BEFORE } from "../../../../src/security/tls/certificate-pair.ts";
import { issueTlsFiles } from "../../../../src/security/tls/issued-tls-files.ts";
import { tempDir } from "../../../support/fixtures.ts";

const NOW = new Date("2026-11-29T16:00:00Z");
const DAY = 24 * 3600 * 1000;
const later = (days: number) => new Date(NOW.getTime() + days * DAY);
const request = { servers: [{ name: "nats-1", hosts: ["nats-1"] }], clients: ["orchestrator"] };

it("renews certificates near their end from the kept CA, and refuses a CA that ended", () => {
  const dir = join(tempDir("shoal-tls-files-"), "tls");
  const first = issueTlsFiles(dir, request, NOW);
  expect(first.files.map((f) => f.issued)).toEqual(["there was none", "there was none"]);
  expect(issueTlsFiles(dir, request, later(300)).files.map((f) => f.issued)).toEqual([undefined, undefined]);

  const nearEnd = later(365 - RENEW_BEFORE / DAY + 1);
  const renewed = issueTlsFiles(dir, request, nearEnd);
  expect(renewed.caCreated).toBe(false);
  expect(renewed.caFingerprint).toBe(first.caFingerprint);
  for (const f of renewed.files) {
    expect(f.issued, f.name).toMatch(/^it ends on /);
    expect(new Date(f.validTo).getTime(), f.name).toBeGreaterThan(nearEnd.getTime() + 300 * DAY);
    const cert = new X509Certificate(readFileSync(f.certPath));
    expect(cert.checkIssued(new X509Certificate(readFileSync(first.caPath))), f.name).toBe(true);
  }

  const caFile = readFileSync(first.caPath, "utf8");
  expect(() => issueTlsFiles(dir, request, later(3651))).toThrow(`the CA ${first.caPath} ended on `);
  expect(readFileSync(first.caPath, "utf8")).toBe(caFile);
});

it("issues KurrentDB node certificates as KurrentDB reads them: RSA in PKCS #8, one common name, both TLS ends", () => {
  const dir = join(tempDir("shoal-tls-files-"), "tls");
  const nodes = {
    servers: [],
    clients: [],
    kurrentdbNodes: [{ name: "kurrentdb-1", hosts: ["kurrentdb-1", "10.0.0.5"] }],
  };
  // A certificate of another kind under the node's name (an earlier --server) is no node's: issued again.
  issueTlsFiles(dir, { servers: [{ name: "kurrentdb-1", hosts: ["kurrentdb-1"] }], clients: [] }, NOW);
  const [node] = issueTlsFiles(dir, nodes, NOW).files;
  expect(node).toMatchObject({ kind: "kurrentdb-node", issued: 'it is for "kurrentdb-1", not "kurrentdb-node"' });
  const cert = new X509Certificate(readFileSync(node!.certPath));
  expect(cert.subject).toContain("CN=kurrentdb-node");
  expect(cert.subjectAltName).toBe("DNS:kurrentdb-1, IP Address:10.0.0.5");
  expect(cert.publicKey.asymmetricKeyType).toBe("rsa");
  expect(cert.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
  // KurrentDB reads "BEGIN PRIVATE KEY" (PKCS #8) or "BEGIN RSA PRIVATE KEY", into an RSA key only.
  expect(readFileSync(node!.keyPath, "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  // A node checks the certificate of a node that dials it: digitalSignature with keyEncipherment, both usages.
  const text = spawnSync("openssl", ["x509", "-noout", "-ext", "keyUsage,extendedKeyUsage", "-in", node!.certPath], {
    encoding: "utf8",
  }).stdout;
  expect(text).toMatch(/Key Usage: critical\n\s+Digital Signature, Key Encipherment\n/);
  expect(text).toMatch(/Extended Key Usage: \n\s+TLS Web Server Authentication, TLS Web Client Authentication\n/);
  expect(issueTlsFiles(dir, nodes, later(10)).files.map((f) => f.issued)).toEqual([undefined]);
});
