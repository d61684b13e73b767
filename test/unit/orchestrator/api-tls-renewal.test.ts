import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { resolveApiTls } from "../../../src/orchestrator/api-tls.ts";
import { join } from "node:path";
import { apiTlsDir } from "../../../src/security/tls/api-ca-path.ts";
import { loadOrCreateApiTls } from "../../../src/security/tls/generated-api-tls.ts";
import { capturedLogger } from "../../support/captured-logger.ts";
import { orchestratorConfig, tempDir } from "../../support/fixtures.ts";

const DAY = 24 * 60 * 60 * 1000;
const serverCertificate = (pem: string) =>
  new X509Certificate(pem.slice(0, pem.indexOf("-----END CERTIFICATE-----") + 25));

describe("the API's generated certificate on a long-running serve", () => {
  it("is renewed by the daily check once it nears its end, by the same CA; not before", () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const config = orchestratorConfig("nats://127.0.0.1:1", { "API.TLS.Disable": false });
    const { logger, messages } = capturedLogger();
    const tls = resolveApiTls(config, logger, () => new Date(now));
    const first = serverCertificate(tls.material!.cert);

    now += 300 * DAY;
    expect(tls.renewIfDue()).toBeUndefined();

    now += 40 * DAY; // 25 days before the year's end: inside the 30 days
    const renewed = tls.renewIfDue();
    expect(renewed).toBeDefined();
    const second = serverCertificate(renewed!.cert);
    expect(second.serialNumber).not.toBe(first.serialNumber);
    expect(Date.parse(second.validTo)).toBeGreaterThan(now + 300 * DAY);
    expect(second.issuer).toBe(first.issuer);
    expect(messages("issued a new server certificate for the API")).toHaveLength(1);
    expect(tls.renewIfDue()).toBeUndefined();
  });

  it("leaves an operator's own certificate files and plain HTTP alone", () => {
    const plain = resolveApiTls(orchestratorConfig("nats://127.0.0.1:1"), capturedLogger().logger, () => new Date());
    expect(plain.material).toBeUndefined();
    expect(plain.renewIfDue()).toBeUndefined();

    const elsewhere = tempDir();
    loadOrCreateApiTls(elsewhere, "127.0.0.1", new Date());
    const own = orchestratorConfig("nats://127.0.0.1:1", {
      "API.TLS.Disable": false,
      "API.TLS.CertFile": join(apiTlsDir(elsewhere), "api.crt"),
      "API.TLS.KeyFile": join(apiTlsDir(elsewhere), "api.key"),
    });
    const tls = resolveApiTls(own, capturedLogger().logger, () => new Date(Date.now() + 360 * DAY));
    expect(tls.material).toBeDefined();
    expect(tls.renewIfDue()).toBeUndefined();
  });
});
