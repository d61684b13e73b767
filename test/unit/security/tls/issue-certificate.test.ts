import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { time, unsignedInteger } from "../../../../src/security/tls/der.ts";
import { testCa, testServerCertificate } from "../../../support/test-certificates.ts";

const NOW = new Date("2026-11-29T16:00:00Z");
const YEAR = 365 * 24 * 3600 * 1000;
function caAndServer(names: string[]) {
  const ca = testCa(NOW);
  const server = testServerCertificate(ca, names, { from: NOW, to: new Date(NOW.getTime() + YEAR) });
  return { ca, caCert: new X509Certificate(ca.pem), server, serverCert: new X509Certificate(server.pem) };
}

describe("issueCertificate", () => {
  it("writes a self-signed CA and a server certificate it signs, as node:crypto reads and verifies them", () => {
    const { ca, caCert, server, serverCert } = caAndServer(["localhost", "127.0.0.1", "::1", "shoal.example"]);
    expect(caCert.ca).toBe(true);
    expect(caCert.verify(ca.publicKey)).toBe(true);
    expect(caCert.subject).toBe("O=Shoal\nCN=Test CA");
    expect(serverCert.ca).toBe(false);
    expect(serverCert.issuer).toBe("O=Shoal\nCN=Test CA");
    expect(serverCert.checkIssued(caCert)).toBe(true);
    expect(serverCert.verify(ca.publicKey)).toBe(true);
    expect(serverCert.verify(server.publicKey)).toBe(false);
    expect(serverCert.checkPrivateKey(server.privateKey)).toBe(true);
    expect(serverCert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(new Date(serverCert.validFrom)).toEqual(NOW);
    expect(new Date(serverCert.validTo)).toEqual(new Date(NOW.getTime() + YEAR));
  });

  it("puts names in the SAN as dNSName and addresses as iPAddress, IPv6 included", () => {
    const { serverCert } = caAndServer(["localhost", "10.1.2.3", "::1", "fe80::a:b", "::ffff:192.0.2.1", "box-7"]);
    expect(serverCert.subjectAltName).toBe(
      "DNS:localhost, IP Address:10.1.2.3, IP Address:0:0:0:0:0:0:0:1, IP Address:FE80:0:0:0:0:0:A:B, " +
        "IP Address:0:0:0:0:0:FFFF:C000:201, DNS:box-7",
    );
    expect(serverCert.checkHost("box-7")).toBe("box-7");
    expect(serverCert.checkHost("other")).toBeUndefined();
    expect(serverCert.checkIP("10.1.2.3")).toBe("10.1.2.3");
    expect(serverCert.checkIP("fe80::a:b")).toBe("fe80::a:b");
    expect(serverCert.checkIP("10.1.2.4")).toBeUndefined();
  });

  it("encodes integers with a leading zero only where the top bit is set, and times past 2049 as GeneralizedTime", () => {
    expect(unsignedInteger(Buffer.from([0, 0, 0x7f]))).toEqual(Buffer.from([2, 1, 0x7f]));
    expect(unsignedInteger(Buffer.from([0x80]))).toEqual(Buffer.from([2, 2, 0, 0x80]));
    expect(time(new Date("2049-12-31T23:59:59Z")).toString("latin1")).toBe("\x17\x0d491231235959Z");
    expect(time(new Date("2050-01-01T00:00:00Z")).toString("latin1")).toBe("\x18\x0f20500101000000Z");
  });
});
