import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/cli/api-client.ts";
import { testCa, testServerCertificate, type TestCa } from "../support/test-certificates.ts";

/**
 * The CLI's client against real TLS servers whose certificates are wrong in one way each: the error says what is
 * wrong and what to do, and the request never reaches the server.
 */

const DAY = 24 * 3600 * 1000;
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serverWith(
  issuer: TestCa,
  names: string[],
  validity: { from: number; to: number },
): Promise<{ url: string; requests: () => number }> {
  const { pem: cert, privateKey } = testServerCertificate(issuer, names, {
    from: new Date(validity.from),
    to: new Date(validity.to),
  });
  let requests = 0;
  const server = createServer({ cert, key: privateKey.export({ type: "pkcs8", format: "pem" }) }, (_req, res) => {
    requests++;
    res.end("{}");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

const trusting = (pem: string) => ({ cas: [{ pem, source: "--api-tls-ca-cert ca.crt" }], insecure: false });
const now = Date.now();

describe("the CLI's client over TLS", () => {
  it("talks to a server whose certificate its CA signed for the host", async () => {
    const authority = testCa(new Date(now - DAY));
    const server = await serverWith(authority, ["127.0.0.1"], { from: now - DAY, to: now + DAY });
    await expect(new ApiClient(server.url, undefined, trusting(authority.pem)).request("GET", "/")).resolves.toEqual(
      {},
    );
    expect(server.requests()).toBe(1);
  });

  it("refuses a certificate for other names, saying how to connect or what to set", async () => {
    const authority = testCa(new Date(now - DAY));
    const server = await serverWith(authority, ["localhost"], { from: now - DAY, to: now + DAY });
    const request = new ApiClient(server.url, undefined, trusting(authority.pem)).request("GET", "/");
    await expect(request).rejects.toThrow(
      `the Shoal API at ${server.url} presented a certificate that is not for this host`,
    );
    await expect(request).rejects.toThrow("Connect by a name it covers, or set API.Host");
    expect(server.requests()).toBe(0);
  });

  it("refuses a certificate that ended, and one from a CA it does not trust, naming the CAs it tried", async () => {
    const authority = testCa(new Date(now - DAY));
    const ended = await serverWith(authority, ["127.0.0.1"], { from: now - 3 * DAY, to: now - DAY });
    await expect(new ApiClient(ended.url, undefined, trusting(authority.pem)).request("GET", "/")).rejects.toThrow(
      "presented a certificate that is not valid now (certificate has expired)",
    );
    const stranger = await serverWith(testCa(new Date(now - DAY)), ["127.0.0.1"], { from: now - DAY, to: now + DAY });
    await expect(new ApiClient(stranger.url, undefined, trusting(authority.pem)).request("GET", "/")).rejects.toThrow(
      "trusted besides the system's CAs: --api-tls-ca-cert ca.crt). Pass the CA that signed it with --api-tls-ca-cert",
    );
    expect(ended.requests() + stranger.requests()).toBe(0);
    // --insecure reaches it all the same.
    await expect(
      new ApiClient(stranger.url, undefined, { cas: [], insecure: true }).request("GET", "/"),
    ).resolves.toEqual({});
  });
});
