import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { embeddedNatsTls } from "../../../src/orchestrator/nats-tls.ts";
import { capturedLogger } from "../../support/captured-logger.ts";
import { orchestratorConfig } from "../../support/fixtures.ts";

const DAY = 24 * 60 * 60 * 1000;

describe("the embedded nats-server's generated certificate on a long-running serve", () => {
  it("is renewed by the daily check's rule near its end, by the same CA, in the files nats-server reads", () => {
    const start = Date.parse("2026-01-01T00:00:00Z");
    const config = orchestratorConfig("", { "Orchestrator.NATS.TLS.Disable": false, "Orchestrator.Host": "127.0.0.1" });
    const { logger, messages } = capturedLogger();
    const tls = embeddedNatsTls(config, logger, new Date(start))!;
    expect(messages("issued the embedded nats-server a certificate from the generated CA")).toHaveLength(1);
    const first = new X509Certificate(readFileSync(tls.certFile));

    expect(tls.renewIfDue(new Date(start + 300 * DAY))).toBeUndefined();
    expect(tls.renewIfDue(new Date(start + 340 * DAY))).toMatch(/^it ends on /);
    const second = new X509Certificate(readFileSync(tls.certFile));
    expect(second.serialNumber).not.toBe(first.serialNumber);
    expect(second.issuer).toBe(first.issuer);
    expect(second.verify(new X509Certificate(readFileSync(tls.caPath!)).publicKey)).toBe(true);
    expect(tls.renewIfDue(new Date(start + 341 * DAY))).toBeUndefined();
  });

  it("is none with Orchestrator.NATS.TLS.Disable, said with a warning", () => {
    const { logger, messages } = capturedLogger();
    expect(embeddedNatsTls(orchestratorConfig(""), logger, new Date())).toBeUndefined();
    expect(messages("Orchestrator.NATS.TLS.Disable is set")).toHaveLength(1);
  });
});
