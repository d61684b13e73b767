import { X509Certificate } from "node:crypto";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { apiCaPath, apiTlsDir } from "../../../../src/security/tls/api-ca-path.ts";
import {
  GeneratedTlsError,
  loadOrCreateApiTls,
  loadOrCreateNatsTls,
  SERVER_RENEW_BEFORE,
} from "../../../../src/security/tls/generated-api-tls.ts";
import { tempDir } from "../../../support/fixtures.ts";

const NOW = new Date("2026-11-29T16:00:00Z");
const DAY = 24 * 3600 * 1000;
const later = (days: number) => new Date(NOW.getTime() + days * DAY);
const served = (cert: string) => new X509Certificate(cert);
const serverFile = (dataDir: string) => readFileSync(join(apiTlsDir(dataDir), "api.crt"), "utf8");

describe("the API's generated TLS material", () => {
  it("creates a CA and a server certificate it signs for this machine's names and API.Host, owner-only keys", () => {
    const dataDir = tempDir();
    const tls = loadOrCreateApiTls(dataDir, "10.9.8.7", NOW);
    expect(tls.caCreated).toBe(true);
    expect(tls.caPath).toBe(apiCaPath(dataDir));
    const ca = new X509Certificate(readFileSync(tls.caPath));
    expect(ca.ca).toBe(true);
    expect(tls.caFingerprint).toBe(ca.fingerprint256);
    const server = served(tls.cert);
    expect(server.checkIssued(ca) && server.verify(ca.publicKey)).toBe(true);
    for (const name of ["localhost", hostname().toLowerCase()]) expect(server.checkHost(name)).toBe(name);
    for (const ip of ["127.0.0.1", "::1", "10.9.8.7"]) expect(server.checkIP(ip)).toBe(ip);
    // The chain the API serves: its certificate, then the CA's.
    expect(tls.cert.endsWith(readFileSync(tls.caPath, "utf8"))).toBe(true);
    for (const key of ["ca.key", "api.key"]) expect(statSync(join(apiTlsDir(dataDir), key)).mode & 0o777).toBe(0o600);
    expect(statSync(apiTlsDir(dataDir)).mode & 0o777).toBe(0o700);
  });

  it("keeps both across restarts; renews the server certificate near its end or for a new API.Host, never the CA", () => {
    const dataDir = tempDir();
    const first = loadOrCreateApiTls(dataDir, "0.0.0.0", NOW);
    const again = loadOrCreateApiTls(dataDir, "0.0.0.0", later(100));
    expect(again).toMatchObject({ caCreated: false, serverIssued: undefined, caFingerprint: first.caFingerprint });
    expect(again.cert).toBe(first.cert);

    const nearEnd = later(365 - SERVER_RENEW_BEFORE / DAY + 1);
    const renewed = loadOrCreateApiTls(dataDir, "0.0.0.0", nearEnd);
    expect(renewed.serverIssued).toMatch(/^it ends on /);
    expect(renewed.caFingerprint).toBe(first.caFingerprint);
    expect(new Date(served(renewed.cert).validTo).getTime()).toBeGreaterThan(nearEnd.getTime() + 300 * DAY);
    expect(serverFile(dataDir)).toBe(renewed.cert.slice(0, serverFile(dataDir).length));

    const named = loadOrCreateApiTls(dataDir, "shoal.example", nearEnd);
    expect(named.serverIssued).toBe("it does not cover shoal.example");
    expect(served(named.cert).checkHost("shoal.example")).toBe("shoal.example");
    expect(named.caFingerprint).toBe(first.caFingerprint);
  });

  it("refuses a CA that ended, or half of a pair, rather than replacing them behind the clients' backs", () => {
    const dataDir = tempDir();
    loadOrCreateApiTls(dataDir, "127.0.0.1", NOW);
    expect(() => loadOrCreateApiTls(dataDir, "127.0.0.1", later(11 * 365))).toThrow(
      new RegExp(
        `the generated CA ${apiCaPath(dataDir)} ended on .*; remove ${apiTlsDir(dataDir)} to generate a new one`,
      ),
    );
    expect(loadOrCreateApiTls(dataDir, "127.0.0.1", later(10 * 365 - 30)).caExpiresSoon).toBeDefined();

    rmSync(join(apiTlsDir(dataDir), "ca.key"));
    expect(() => loadOrCreateApiTls(dataDir, "127.0.0.1", NOW)).toThrow(GeneratedTlsError);
    expect(() => loadOrCreateApiTls(dataDir, "127.0.0.1", NOW)).toThrow(
      new RegExp(`ca\\.key is missing beside .*ca\\.crt; restore it, or remove ${apiTlsDir(dataDir)} to generate`),
    );

    const other = tempDir();
    loadOrCreateApiTls(other, "127.0.0.1", NOW);
    writeFileSync(join(apiTlsDir(other), "ca.key"), readFileSync(join(apiTlsDir(other), "api.key")));
    expect(() => loadOrCreateApiTls(other, "127.0.0.1", NOW)).toThrow(/ca\.key is not the key of .*ca\.crt/);
  });

  it("issues a new server certificate when the kept one is not the CA's, is half missing or unreadable", () => {
    const dataDir = tempDir();
    const first = loadOrCreateApiTls(dataDir, "127.0.0.1", NOW);
    const stranger = tempDir();
    loadOrCreateApiTls(stranger, "127.0.0.1", NOW);
    for (const file of ["api.crt", "api.key"])
      writeFileSync(join(apiTlsDir(dataDir), file), readFileSync(join(apiTlsDir(stranger), file)));
    const again = loadOrCreateApiTls(dataDir, "127.0.0.1", NOW);
    expect(again.serverIssued).toBe("it was not issued by the CA");
    expect(again.caFingerprint).toBe(first.caFingerprint);

    rmSync(join(apiTlsDir(dataDir), "api.key"));
    expect(loadOrCreateApiTls(dataDir, "127.0.0.1", NOW).serverIssued).toMatch(/api\.key is missing beside/);
    writeFileSync(join(apiTlsDir(dataDir), "api.crt"), "not a certificate");
    expect(loadOrCreateApiTls(dataDir, "127.0.0.1", NOW).serverIssued).toMatch(/^cannot use .*api\.crt/);
    expect(served(loadOrCreateApiTls(dataDir, "127.0.0.1", NOW).cert).checkIP("127.0.0.1")).toBe("127.0.0.1");
  });

  it("signs the embedded nats-server's own certificate with the same CA, in files of its own", () => {
    const dataDir = tempDir();
    const api = loadOrCreateApiTls(dataDir, "0.0.0.0", NOW);
    const nats = loadOrCreateNatsTls(dataDir, "nats.example", NOW);
    expect(nats.caCreated).toBe(false);
    expect(nats.caFingerprint).toBe(api.caFingerprint);
    expect([nats.certPath, nats.keyPath]).toEqual([
      join(apiTlsDir(dataDir), "nats.crt"),
      join(apiTlsDir(dataDir), "nats.key"),
    ]);
    const ca = new X509Certificate(readFileSync(nats.caPath));
    const server = new X509Certificate(readFileSync(nats.certPath));
    expect(server.checkIssued(ca) && server.verify(ca.publicKey)).toBe(true);
    expect(server.checkHost("nats.example")).toBe("nats.example");
    expect(server.subject).toContain("CN=Shoal NATS");
    expect(statSync(nats.keyPath).mode & 0o777).toBe(0o600);
    // The API's certificate is untouched: each server renews its own.
    expect(serverFile(dataDir)).toBe(api.cert.slice(0, api.cert.indexOf("-----END CERTIFICATE-----") + 26));
    expect(loadOrCreateNatsTls(dataDir, "nats.example", later(1)).serverIssued).toBeUndefined();
  });
});
