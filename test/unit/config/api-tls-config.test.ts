import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.ts";
import { apiTlsDir } from "../../../src/security/tls/api-ca-path.ts";
import { loadOrCreateApiTls } from "../../../src/security/tls/generated-api-tls.ts";
import { tempDir } from "../../support/fixtures.ts";

/** A certificate and its key in files, as an operator would give them (made by the generator, from another DataDir). */
function certificateFiles(): { cert: string; key: string; otherKey: string } {
  const [a, b] = [tempDir(), tempDir()];
  loadOrCreateApiTls(a, "127.0.0.1", new Date());
  loadOrCreateApiTls(b, "127.0.0.1", new Date());
  return {
    cert: join(apiTlsDir(a), "api.crt"),
    key: join(apiTlsDir(a), "api.key"),
    otherKey: join(apiTlsDir(b), "api.key"),
  };
}

const load = (settings: string[]) => () => loadConfig({ env: {}, settings });

describe("API.TLS config", () => {
  const files = certificateFiles();

  it("is on by default, and takes a certificate and its key", () => {
    expect(loadConfig({ env: {} })).toMatchObject({
      "API.TLS.Disable": false,
      "API.TLS.CertFile": "",
      "API.TLS.KeyFile": "",
    });
    expect(load([`API.TLS.CertFile=${files.cert}`, `API.TLS.KeyFile=${files.key}`])()).toMatchObject({
      "API.TLS.CertFile": files.cert,
    });
    expect(loadConfig({ env: { SHOAL_API_TLS_DISABLE: "true" } })["API.TLS.Disable"]).toBe(true);
  });

  it("refuses one file without the other, and files while TLS is disabled", () => {
    expect(load([`API.TLS.CertFile=${files.cert}`])).toThrow(
      "API.TLS.CertFile is set but API.TLS.KeyFile is not: give both, or neither to have serve generate a certificate",
    );
    expect(load([`API.TLS.KeyFile=${files.key}`])).toThrow("API.TLS.KeyFile is set but API.TLS.CertFile is not");
    expect(load([`API.TLS.CertFile=${files.cert}`, `API.TLS.KeyFile=${files.key}`, "API.TLS.Disable"])).toThrow(
      "API.TLS.Disable is set together with API.TLS.CertFile/KeyFile: keep one or the other",
    );
  });

  it("refuses unreadable files, files of the wrong kind, and a key that is not the certificate's, never showing a key", () => {
    const missing = join(tempDir(), "none.crt");
    expect(load([`API.TLS.CertFile=${missing}`, `API.TLS.KeyFile=${files.key}`])).toThrow(
      `API.TLS.CertFile ${missing} cannot be read: ENOENT`,
    );
    const locked = join(tempDir(), "locked.key");
    writeFileSync(locked, readFileSync(files.key));
    chmodSync(locked, 0);
    if (process.getuid?.() !== 0) {
      expect(load([`API.TLS.CertFile=${files.cert}`, `API.TLS.KeyFile=${locked}`])).toThrow(
        `API.TLS.KeyFile ${locked} cannot be read: EACCES`,
      );
    }
    expect(load([`API.TLS.CertFile=${files.key}`, `API.TLS.KeyFile=${files.key}`])).toThrow(
      `API.TLS.CertFile ${files.key} holds no PEM certificate`,
    );
    expect(load([`API.TLS.CertFile=${files.cert}`, `API.TLS.KeyFile=${files.cert}`])).toThrow(
      `API.TLS.KeyFile ${files.cert} holds no PEM private key`,
    );
    let error: Error | undefined;
    try {
      load([`API.TLS.CertFile=${files.cert}`, `API.TLS.KeyFile=${files.otherKey}`])();
    } catch (e) {
      error = e as Error;
    }
    expect(error?.name).toBe("ConfigError");
    expect(error?.message).toBe(
      `API.TLS.KeyFile ${files.otherKey} is not the key of the certificate in API.TLS.CertFile ${files.cert} ` +
        "(O=Shoal, CN=Shoal API)",
    );
    expect(error?.message).not.toContain("PRIVATE KEY");
  });
});
