import { once } from "node:events";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { describe, expect, it } from "vitest";
import { leaveOutIpServernames, withoutIpServername } from "../../../src/events/eventstoredb/ip-servername.ts";
import { testCa, testServerCertificate } from "../../support/test-certificates.ts";

describe("TLS server names for a server named by IP", () => {
  it("leaves out an IPv4 or IPv6 servername and keeps a host name", () => {
    expect(withoutIpServername({ host: "10.0.0.7", servername: "10.0.0.7", port: 2113 })).toEqual({
      host: "10.0.0.7",
      port: 2113,
    });
    expect(withoutIpServername({ host: "::1", servername: "::1" })).toEqual({ host: "::1" });
    const named = { host: "10.0.0.7", servername: "kurrentdb-1" };
    expect(withoutIpServername(named)).toBe(named);
    expect(withoutIpServername({ host: "kurrentdb-1" })).toEqual({ host: "kurrentdb-1" });
  });

  it("connects to a server by IP with no IP sent as SNI, the certificate still checked against the IP", async () => {
    const ca = testCa();
    const now = Date.now();
    const cert = testServerCertificate(ca, ["127.0.0.1"], {
      from: new Date(now - 60_000),
      to: new Date(now + 3_600_000),
    });
    const key = cert.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    // What each connection asked for as its server name (false: none), then closed by the server.
    const names: (string | false)[] = [];
    const server = tls.createServer({ cert: cert.pem, key }, (socket) => {
      names.push(socket.servername as string | false);
      socket.end();
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(w.code ?? w.name);
    process.on("warning", onWarning);
    // As grpc-js connects for the KurrentDB client: the servername is the host it was given.
    const dial = (host: string) =>
      new Promise<boolean>((resolve, reject) => {
        const socket = tls.connect({ host, port, servername: host, ca: ca.pem });
        socket.once("secureConnect", () => {
          socket.resume();
          socket.once("close", () => resolve(socket.authorized));
        });
        socket.once("error", reject);
      });
    try {
      leaveOutIpServernames();
      leaveOutIpServernames();
      expect(await dial("127.0.0.1")).toBe(true);
      expect(names).toEqual([false]);
      expect(warnings).not.toContain("DEP0123");
      // A certificate for other names is still refused.
      const other = testServerCertificate(ca, ["10.9.9.9"], {
        from: new Date(now - 60_000),
        to: new Date(now + 3_600_000),
      });
      server.setSecureContext({
        cert: other.pem,
        key: other.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      });
      await expect(dial("127.0.0.1")).rejects.toThrow(/IP: 127\.0\.0\.1 is not in the cert's list/);
    } finally {
      process.off("warning", onWarning);
      server.close();
    }
  });
});
