import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { apiEndpointFrom, type ApiFlagValues } from "../../../src/cli/api-client-from-flags.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { defaultConfig, type ShoalConfig } from "../../../src/config/keys.ts";
import { apiCaPath } from "../../../src/security/tls/api-ca-path.ts";
import { loadOrCreateApiTls } from "../../../src/security/tls/generated-api-tls.ts";
import { tempDir } from "../../support/fixtures.ts";

function endpoint(values: ApiFlagValues, config: Partial<ShoalConfig> = {}, env: Record<string, string> = {}) {
  const warnings: string[] = [];
  const result = apiEndpointFrom(values, { ...defaultConfig(), DataDir: tempDir(), ...config }, env, (text) =>
    warnings.push(text),
  );
  return { ...result, warnings };
}

describe("where the CLI finds the API and how it talks to it", () => {
  it("talks HTTPS by default, plain HTTP with API.TLS.Disable, and the scheme --api-host spells either way", () => {
    expect(endpoint({}).baseUrl).toBe("https://127.0.0.1:1234");
    expect(endpoint({}, { "API.TLS.Disable": true }).baseUrl).toBe("http://127.0.0.1:1234");
    expect(endpoint({ "api-host": "http://box:99" }).baseUrl).toBe("http://box:99");
    expect(endpoint({ "api-host": "https://box" }, { "API.TLS.Disable": true }).baseUrl).toBe("https://box:1234");
    expect(endpoint({ "api-host": "https://[::1]:7", "api-port": "8" })).toMatchObject({
      baseUrl: "https://[::1]:8",
      host: "::1",
    });
    expect(endpoint({ "api-tls": true }, { "API.TLS.Disable": true }).baseUrl).toBe("https://127.0.0.1:1234");
    expect(endpoint({}, { "API.TLS.Disable": true }).tls).toBeUndefined();
  });

  it("refuses a TLS flag with an http:// host, and a host that is more than scheme, host and port", () => {
    expect(() => endpoint({ "api-host": "http://box", insecure: true })).toThrow(UsageError);
    expect(() => endpoint({ "api-host": "http://box", "api-tls": true })).toThrow(/is plain HTTP, but a TLS flag/);
    expect(() => endpoint({ "api-host": "https://box/api" })).toThrow(/give the scheme, host and port only/);
  });

  it("trusts this machine's generated CAs (serve's and devstack's), and a given one first", () => {
    const dataDir = tempDir();
    loadOrCreateApiTls(dataDir, "127.0.0.1", new Date());
    loadOrCreateApiTls(join(dataDir, "devstack"), "127.0.0.1", new Date());
    const given = tempDir();
    loadOrCreateApiTls(given, "127.0.0.1", new Date());
    const found = endpoint({ "api-tls-ca-cert": apiCaPath(given) }, { DataDir: dataDir });
    expect(found.tls?.cas.map((c) => c.source)).toEqual([
      `--api-tls-ca-cert ${apiCaPath(given)}`,
      `this machine's generated CA ${apiCaPath(dataDir)}`,
      `this machine's generated CA ${apiCaPath(join(dataDir, "devstack"))}`,
    ]);
    expect(found.tls?.cas[0]?.pem).toBe(readFileSync(apiCaPath(given), "utf8"));
    expect(endpoint({}, { DataDir: dataDir }, { SHOAL_API_TLS_CACERT: apiCaPath(given) }).tls?.cas[0]?.source).toBe(
      `SHOAL_API_TLS_CACERT ${apiCaPath(given)}`,
    );
    expect(endpoint({}).tls).toEqual({ cas: [], insecure: false });
  });

  it("refuses a CA file it cannot use, and warns on stderr for --insecure", () => {
    const none = join(tempDir(), "none.crt");
    expect(() => endpoint({ "ca-cert": none })).toThrow(`--ca-cert ${none} cannot be read: ENOENT`);
    const dataDir = tempDir();
    loadOrCreateApiTls(dataDir, "127.0.0.1", new Date());
    const key = join(dataDir, "credentials", "tls", "ca.key");
    expect(() => endpoint({ "api-tls-ca-cert": key })).toThrow(`--api-tls-ca-cert ${key} holds no PEM certificate`);
    for (const flag of ["insecure", "api-tls-insecure"] as const) {
      const insecure = endpoint({ [flag]: true });
      expect(insecure.tls).toEqual({ cas: [], insecure: true });
      expect(insecure.warnings).toEqual([expect.stringMatching(/^WARNING: --insecure: the API's certificate/)]);
    }
    expect(endpoint({}).warnings).toEqual([]);
  });
});
