import { createPrivateKey, generateKeyPairSync, X509Certificate } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { computeNatsTls } from "../../src/compute/compute-nats-tls.ts";
import { defaultConfig } from "../../src/config/keys.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { apiCaPath, apiTlsDir } from "../../src/security/tls/api-ca-path.ts";
import { issueCertificate } from "../../src/security/tls/issue-certificate.ts";
import { loadOrCreateNatsTls } from "../../src/security/tls/generated-api-tls.ts";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { runShoal } from "../support/shoal-process.ts";
import { ownNatsOrchestratorConfig } from "../support/own-nats-orchestrator-config.ts";
import { testAgent } from "../support/test-agent.ts";

/** Compute.TLS.* as `shoal compute` reads them, for an orchestrator at `url`. */
const nodeTls = (url: string, settings: { CACert?: string; Insecure?: boolean }, localDataDirs: string[] = []) =>
  computeNatsTls(
    {
      "Compute.Orchestrators": [url],
      "Compute.TLS.CACert": settings.CACert ?? "",
      "Compute.TLS.Insecure": settings.Insecure ?? false,
    },
    localDataDirs,
    silentLogger,
  );

describe("the embedded nats-server speaks TLS by default", () => {
  let orchestrator: RunningOrchestrator;
  let dataDir: string;
  let leafNodePort: number;
  const stops: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    const config = await ownNatsOrchestratorConfig("shoal-nats-tls-", {
      "Orchestrator.NATS.TLS.Disable": false,
      "Orchestrator.NATS.LeafNodes.Port": await freePort(),
    });
    dataDir = config.DataDir;
    leafNodePort = config["Orchestrator.NATS.LeafNodes.Port"];
    orchestrator = await startOrchestrator(config, silentLogger);
  }, 60_000);
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
    await orchestrator.stop();
  });

  const agent = (nodeId: string, tls: ReturnType<typeof nodeTls> | undefined) => {
    const a = testAgent({
      nodeId,
      orchestrators: [orchestrator.natsUrl],
      token: orchestrator.joinToken.token,
      ...(tls === undefined ? {} : { tls }),
    });
    stops.push(() => a.stop());
    return a;
  };

  it("with a certificate from the generated CA, which the orchestrator's own connections trust", () => {
    const conf = JSON.parse(readFileSync(join(dataDir, "nats", "nats-server.conf"), "utf8")) as {
      tls?: { cert_file: string; key_file: string };
      leafnodes?: { tls?: { cert_file: string } };
    };
    const served = { cert_file: join(dataDir, "credentials", "tls", "nats.crt") };
    expect(conf.tls).toMatchObject({ ...served, key_file: join(dataDir, "credentials", "tls", "nats.key") });
    expect(conf.leafnodes?.tls).toMatchObject(served);
    // Started at all: the orchestrator's own connections (node protocol, events, system account) are over TLS.
    expect(orchestrator.natsUrl).toMatch(/^nats:\/\/127\.0\.0\.1:/);
  });

  it("lets in a node that trusts the CA (Compute.TLS.CACert), and one that finds it on this machine", async () => {
    const given = agent("tls-given", nodeTls(orchestrator.natsUrl, { CACert: apiCaPath(dataDir) }));
    await given.start();
    expect(given.isRegistered).toBe(true);
    const found = agent("tls-found", nodeTls(orchestrator.natsUrl, {}, [tempDir(), dataDir]));
    await found.start();
    expect(found.isRegistered).toBe(true);
    const tlsUrl = orchestrator.natsUrl.replace(/^nats:/, "tls:");
    const spelled = testAgent({
      nodeId: "tls-url",
      orchestrators: [tlsUrl],
      token: orchestrator.joinToken.token,
      tls: nodeTls(tlsUrl, { CACert: apiCaPath(dataDir) }),
    });
    stops.push(() => spelled.stop());
    await spelled.start();
    expect(spelled.isRegistered).toBe(true);
  });

  it("refuses a node that does not trust the certificate, saying which key to set", async () => {
    await expect(agent("tls-none", nodeTls(orchestrator.natsUrl, {})).start()).rejects.toThrow(
      "presents a certificate this client does not trust (unable to verify the first certificate): " +
        "set Compute.TLS.CACert to the CA that signed it",
    );
    const stranger = tempDir();
    loadOrCreateNatsTls(stranger, "127.0.0.1", new Date());
    await expect(
      agent("tls-wrong", nodeTls(orchestrator.natsUrl, { CACert: apiCaPath(stranger) })).start(),
    ).rejects.toThrow(`Compute.TLS.CACert ${apiCaPath(stranger)} is not its issuer: set Compute.TLS.CACert`);
  });

  it("lets in a node with Compute.TLS.Insecure, which says loudly what it gives up", async () => {
    const { logger, messages } = capturedLogger();
    const tls = computeNatsTls(
      { "Compute.Orchestrators": [orchestrator.natsUrl], "Compute.TLS.CACert": "", "Compute.TLS.Insecure": true },
      [],
      logger,
    );
    expect(messages("Compute.TLS.Insecure is set: the NATS server's certificate is not checked")).toHaveLength(1);
    const insecure = agent("tls-insecure", tls);
    await insecure.start();
    expect(insecure.isRegistered).toBe(true);
  });

  it("has `shoal leaf config` write a leaf that trusts the hub's CA, and a node joins through that leaf", async () => {
    const out = tempDir("shoal-nats-tls-leaf-");
    const port = await freePort();
    const written = await runShoal(
      [
        "leaf",
        "config",
        ...["--out", out, "--hub", `nats-leaf://127.0.0.1:${leafNodePort}`, "--listen", `127.0.0.1:${port}`],
        ...["-c", `DataDir=${dataDir}`, "-c", `Orchestrator.NATS.LeafNodes.Port=${leafNodePort}`],
      ],
      { SHOAL_ORCHESTRATOR_NATS_TLS_DISABLE: "false" },
    );
    expect(written).toMatchObject({ code: 0, stdout: expect.stringContaining("The leaf speaks TLS to the hub") });
    const conf = JSON.parse(readFileSync(join(out, "leaf.conf"), "utf8")) as {
      leafnodes: { remotes: { tls?: { ca_file: string } }[] };
    };
    expect(conf.leafnodes.remotes.map((r) => r.tls)).toEqual([
      { ca_file: join(out, "hub-ca.crt") },
      { ca_file: join(out, "hub-ca.crt") },
    ]);
    expect(readFileSync(join(out, "hub-ca.crt"), "utf8")).toBe(readFileSync(apiCaPath(dataDir), "utf8"));
    const leaf = await EmbeddedNatsServer.start({
      host: "127.0.0.1",
      port,
      dir: out,
      logger: silentLogger,
      configFile: join(out, "leaf.conf"),
    });
    stops.push(() => leaf.stop());
    const behindLeaf = testAgent({
      nodeId: "tls-leaf",
      orchestrators: [leaf.url],
      token: orchestrator.joinToken.token,
    });
    stops.push(() => behindLeaf.stop());
    await behindLeaf.start();
    expect(behindLeaf.isRegistered).toBe(true);
  }, 60_000);
});

describe("the embedded nats-server's certificate, rotated", () => {
  it("is issued again when its files are gone and served after a reload (SIGHUP), the CA kept", async () => {
    const config = await ownNatsOrchestratorConfig("shoal-nats-tls-rotate-", {
      "Orchestrator.NATS.TLS.Disable": false,
    });
    const orchestrator = await startOrchestrator(config, silentLogger);
    const stops: (() => Promise<unknown>)[] = [];
    try {
      const certFile = join(config.DataDir, "credentials", "tls", "nats.crt");
      const before = readFileSync(certFile, "utf8");
      const ca = readFileSync(apiCaPath(config.DataDir), "utf8");
      rmSync(certFile);
      expect(orchestrator.reloadNatsTls()).toBe(true);
      expect(readFileSync(certFile, "utf8")).not.toBe(before);
      expect(readFileSync(apiCaPath(config.DataDir), "utf8")).toBe(ca);
      const after = testAgent({
        nodeId: "tls-after-reload",
        orchestrators: [orchestrator.natsUrl],
        token: orchestrator.joinToken.token,
        tls: nodeTls(orchestrator.natsUrl, { CACert: apiCaPath(config.DataDir) }),
      });
      stops.push(() => after.stop());
      await after.start();
      expect(after.isRegistered).toBe(true);
    } finally {
      for (const stop of stops) await stop();
      await orchestrator.stop();
    }
  }, 60_000);
});

describe("a compute node and a NATS without TLS", () => {
  it("speaks plain NATS despite a CA found on this machine, but not with Compute.TLS.CACert", async () => {
    const orchestrator = await startOrchestrator(await ownNatsOrchestratorConfig("shoal-nats-plain-"), silentLogger);
    const leftover = tempDir();
    loadOrCreateNatsTls(leftover, "127.0.0.1", new Date());
    const stops: (() => Promise<unknown>)[] = [];
    try {
      const found = testAgent({
        nodeId: "plain-found",
        orchestrators: [orchestrator.natsUrl],
        token: orchestrator.joinToken.token,
        tls: nodeTls(orchestrator.natsUrl, {}, [leftover]),
      });
      stops.push(() => found.stop());
      await found.start();
      expect(found.isRegistered).toBe(true);
      expect(orchestrator.reloadNatsTls()).toBe(false);
      const given = testAgent({
        nodeId: "plain-given",
        orchestrators: [orchestrator.natsUrl],
        token: orchestrator.joinToken.token,
        tls: nodeTls(orchestrator.natsUrl, { CACert: apiCaPath(leftover) }),
      });
      stops.push(() => given.stop());
      await expect(given.start()).rejects.toThrow(
        /does not speak TLS, but this client asks for it: its TLS is off \(Orchestrator\.NATS\.TLS\.Disable\)/,
      );
    } finally {
      for (const stop of stops) await stop();
      await orchestrator.stop();
    }
  }, 60_000);
});

describe("an external NATS with a tls block", () => {
  let server: EmbeddedNatsServer;
  let caFile: string;
  let caKeyFile: string;

  beforeAll(async () => {
    const dir = tempDir("shoal-nats-external-tls-");
    const tls = loadOrCreateNatsTls(dir, "127.0.0.1", new Date());
    caFile = tls.caPath;
    caKeyFile = join(apiTlsDir(dir), "ca.key");
    const port = await freePort();
    const configFile = join(dir, "nats.conf");
    writeFileSync(
      configFile,
      JSON.stringify({
        listen: `127.0.0.1:${port}`,
        jetstream: { store_dir: join(dir, "js") },
        tls: { cert_file: tls.certPath, key_file: tls.keyPath },
      }),
    );
    server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile });
  }, 30_000);
  afterAll(() => server.stop());

  it("is used with Orchestrator.NATS.TLS.CACert, on a nats:// or a tls:// URL", async () => {
    for (const url of [server.url, server.url.replace(/^nats:/, "tls:")]) {
      const o = await startOrchestrator(
        orchestratorConfig(url, { "Orchestrator.NATS.TLS.CACert": caFile }),
        silentLogger,
      );
      await o.stop();
    }
  }, 60_000);

  it("is refused without it, naming the key to set", async () => {
    await expect(startOrchestrator(orchestratorConfig(server.url), silentLogger)).rejects.toThrow(
      /presents a certificate this client does not trust .*: set Orchestrator\.NATS\.TLS\.CACert/,
    );
  });

  it("is refused at a name its certificate does not cover, saying so", async () => {
    // The same CA, a certificate for another name only; dialled as localhost.
    const dir = tempDir("shoal-nats-other-name-");
    const ca = { cert: new X509Certificate(readFileSync(caFile)), key: createPrivateKey(readFileSync(caKeyFile)) };
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const now = Date.now();
    writeFileSync(
      join(dir, "other.crt"),
      issueCertificate({
        commonName: "other",
        publicKey,
        issuer: { commonName: "Shoal API CA", privateKey: ca.key, publicKey: ca.cert.publicKey },
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + 86_400_000),
        ca: false,
        names: ["other.example"],
      }),
    );
    writeFileSync(join(dir, "other.key"), privateKey.export({ type: "pkcs8", format: "pem" }));
    const port = await freePort();
    const configFile = join(dir, "nats.conf");
    const tls = { cert_file: join(dir, "other.crt"), key_file: join(dir, "other.key") };
    writeFileSync(configFile, JSON.stringify({ listen: `127.0.0.1:${port}`, tls }));
    const other = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile });
    try {
      await expect(
        startOrchestrator(
          orchestratorConfig(`nats://localhost:${port}`, { "Orchestrator.NATS.TLS.CACert": caFile }),
          silentLogger,
        ),
      ).rejects.toThrow(/presents a certificate for other names .*: connect by a name it covers/);
    } finally {
      await other.stop();
    }
  });

  it("refuses a CA file that holds no certificate before connecting", async () => {
    const junk = join(tempDir(), "ca.crt");
    writeFileSync(junk, "not a certificate");
    await expect(
      startOrchestrator(orchestratorConfig(server.url, { "Orchestrator.NATS.TLS.CACert": junk }), silentLogger),
    ).rejects.toThrow(`Orchestrator.NATS.TLS.CACert ${junk} holds no PEM certificate`);
    expect(defaultConfig()["Orchestrator.NATS.TLS.Disable"]).toBe(false);
  });
});
