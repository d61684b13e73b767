import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.ts";
import { loadOrCreateNatsTls } from "../../../src/security/tls/generated-api-tls.ts";
import { tempDir } from "../../support/fixtures.ts";

const load = (settings: string[]) => () => loadConfig({ env: {}, settings });

describe("NATS TLS config", () => {
  const own = loadOrCreateNatsTls(tempDir(), "127.0.0.1", new Date());
  const other = loadOrCreateNatsTls(tempDir(), "127.0.0.1", new Date());

  it("is on by default for the embedded server, and takes a certificate and its key", () => {
    expect(loadConfig({ env: {} })).toMatchObject({
      "Orchestrator.NATS.TLS.Disable": false,
      "Orchestrator.NATS.TLS.CertFile": "",
      "Compute.TLS.Insecure": false,
    });
    const pair = [`Orchestrator.NATS.TLS.CertFile=${own.certPath}`, `Orchestrator.NATS.TLS.KeyFile=${own.keyPath}`];
    expect(load(pair)()["Orchestrator.NATS.TLS.CertFile"]).toBe(own.certPath);
    expect(loadConfig({ env: { SHOAL_ORCHESTRATOR_NATS_TLS_DISABLE: "true" } })["Orchestrator.NATS.TLS.Disable"]).toBe(
      true,
    );
  });

  it("refuses half a pair, a pair while TLS is off, and a key that is not the certificate's", () => {
    expect(load([`Orchestrator.NATS.TLS.CertFile=${own.certPath}`])).toThrow(
      "Orchestrator.NATS.TLS.CertFile is set but Orchestrator.NATS.TLS.KeyFile is not",
    );
    expect(
      load([
        `Orchestrator.NATS.TLS.CertFile=${own.certPath}`,
        `Orchestrator.NATS.TLS.KeyFile=${own.keyPath}`,
        "Orchestrator.NATS.TLS.Disable",
      ]),
    ).toThrow("Orchestrator.NATS.TLS.Disable is set together with Orchestrator.NATS.TLS.CertFile/KeyFile");
    expect(
      load([`Orchestrator.NATS.TLS.CertFile=${own.certPath}`, `Orchestrator.NATS.TLS.KeyFile=${other.keyPath}`]),
    ).toThrow(`Orchestrator.NATS.TLS.KeyFile ${other.keyPath} is not the key of the certificate`);
    expect(load([`Orchestrator.NATS.TLS.ClientKeyFile=${own.keyPath}`])).toThrow(
      "Orchestrator.NATS.TLS.ClientKeyFile is set but Orchestrator.NATS.TLS.ClientCertFile is not",
    );
    const missing = join(tempDir(), "none.crt");
    expect(
      load([`Orchestrator.NATS.TLS.ClientCertFile=${missing}`, `Orchestrator.NATS.TLS.ClientKeyFile=${own.keyPath}`]),
    ).toThrow(`Orchestrator.NATS.TLS.ClientCertFile ${missing} cannot be read: ENOENT`);
  });

  it("refuses Compute.TLS.Insecure together with Compute.TLS.CACert", () => {
    expect(load([`Compute.TLS.CACert=${own.caPath}`, "Compute.TLS.Insecure"])).toThrow(
      "Compute.TLS.Insecure is set together with Compute.TLS.CACert",
    );
    expect(load(["Compute.TLS.Insecure"])()["Compute.TLS.Insecure"]).toBe(true);
  });
});
