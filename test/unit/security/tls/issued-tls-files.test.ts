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
