import { X509Certificate } from "node:crypto";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaPath, apiTlsDir } from "../../src/security/tls/api-ca-path.ts";
import { loadOrCreateApiTls } from "../../src/security/tls/generated-api-tls.ts";
import { tempDir } from "../support/fixtures.ts";
import { localOrchestratorFlags } from "../support/local-orchestrator-flags.ts";
import { freePort } from "../support/nats-server.ts";
import { runShoal, ShoalProcess, waitFor } from "../support/shoal-process.ts";

/**
 * The API over HTTPS as a user meets it: a real `shoal serve` (TLS on, as by default) generating its CA and server
 * certificate, the CLI trusting that CA on the same machine, a CA given by flag, --insecure, and the refusals; the CA
 * kept across a restart; an operator's own certificate files, replaced and reloaded with SIGHUP.
 */

const SLOW = { timeout: 180_000 };
/** These processes talk TLS: shoal-process's default for tests is plain HTTP. */
const TLS_ON = { SHOAL_API_TLS_DISABLE: "false" };

const processes: ShoalProcess[] = [];
afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null) await p.kill("SIGTERM");
});

async function serve(dataDir: string, apiPort: number, natsPort: number, extra: string[] = []): Promise<ShoalProcess> {
  const flags = [...localOrchestratorFlags({ dataDir, apiPort, natsPort }), "-c", "NodeID=node-0", ...extra];
  const p = ShoalProcess.start(["serve", ...flags], TLS_ON);
  processes.push(p);
  await p.waitForOutput("is running", 60_000);
  return p;
}

/** The certificate the API presents now, trusting `ca`. */
function presented(port: number, ca: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ca, servername: "localhost" }, () => {
      const raw = socket.getPeerX509Certificate();
      socket.end();
      if (raw) resolve(raw);
      else reject(new Error("no certificate"));
    });
    socket.once("error", reject);
  });
}

describe("shoal serve with its generated certificate", SLOW, () => {
  const dataDir = tempDir("shoal-tls-");
  let apiPort: number;
  let natsPort: number;
  let p: ShoalProcess;
  /** The CLI on the orchestrator's machine: it finds the CA (and the admin key) under the DataDir. */
  const local = () => ({ ...TLS_ON, SHOAL_DATADIR: dataDir, SHOAL_API_PORT: String(apiPort) });
  /** The CLI elsewhere: nothing of the orchestrator's on its disk. */
  const remote = () => ({ ...TLS_ON, SHOAL_DATADIR: tempDir(), SHOAL_API_PORT: String(apiPort) });

  beforeAll(async () => {
    [apiPort, natsPort] = [await freePort(), await freePort()];
    p = await serve(dataDir, apiPort, natsPort);
  }, 90_000);

  it("serves HTTPS, says where the CA is and logs its SHA-256 fingerprint", async () => {
    const caFile = apiCaPath(dataDir);
    expect(p.stdout).toContain(`API:  https://127.0.0.1:${apiPort}`);
    expect(p.stdout).toContain(`API CA:  ${caFile}`);
    const ca = new X509Certificate(readFileSync(caFile));
    expect(p.stderr).toContain(`caSha256=${ca.fingerprint256}`);
    const served = await presented(apiPort, readFileSync(caFile, "utf8"));
    expect(served.checkIssued(ca)).toBe(true);
    expect(served.checkIP("127.0.0.1")).toBe("127.0.0.1");
  });

  it("is trusted by the CLI on the same machine, which finds the CA as it finds the admin key", async () => {
    const res = await runShoal(["node", "list"], local());
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^node-0 +Requester +APPROVED/m);
    // The history needs credentials: the admin key went over HTTPS to the API that proved it is this machine's.
    const history = await runShoal(["node", "history", "node-0"], local());
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toContain("NodeRegistered");
  });

  it("is trusted elsewhere with --api-tls-ca-cert (or --ca-cert, or SHOAL_API_TLS_CACERT)", async () => {
    const copy = join(tempDir(), "shoal-ca.crt");
    copyFileSync(apiCaPath(dataDir), copy);
    for (const [args, env] of [
      [["--api-tls-ca-cert", copy], {}],
      [["--ca-cert", copy, "--api-host", `https://localhost:${apiPort}`], {}],
      [["--api-tls"], { SHOAL_API_TLS_CACERT: copy }],
    ] as const) {
      const res = await runShoal(["node", "list", ...args], { ...remote(), ...env });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toMatch(/^node-0 /m);
    }
  });

  it("is refused without trust, naming the flags that fix it; --insecure goes on with a loud warning", async () => {
    const refused = await runShoal(["node", "list"], remote());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the Shoal API at https://127.0.0.1:${apiPort} presented a certificate`);
    expect(refused.stderr).toContain("does not trust");
    expect(refused.stderr).toContain("--api-tls-ca-cert FILE");
    expect(refused.stderr).toContain("--insecure");

    for (const flag of ["--insecure", "--api-tls-insecure"]) {
      const insecure = await runShoal(["node", "list", flag], remote());
      expect(insecure.code, insecure.stderr).toBe(0);
      expect(insecure.stdout).toMatch(/^node-0 /m);
      expect(insecure.stderr).toMatch(/^WARNING: --insecure: the API's certificate is not checked/);
    }
  });

  it("says which scheme to use when the CLI speaks plain HTTP to it", async () => {
    const res = await runShoal(["node", "list", "--api-host", "http://127.0.0.1"], local());
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`closed the connection without an answer: if it serves HTTPS (the default)`);
    expect(res.stderr).toContain(`--api-host https://127.0.0.1:${apiPort} or --api-tls`);
    const tlsOff = await runShoal(["node", "list", "-c", "API.TLS.Disable=true"], local());
    expect(tlsOff.code).toBe(1);
    expect(tlsOff.stderr).toContain("if it serves HTTPS (the default)");
  });

  it("keeps the CA across a restart; the CLI goes on trusting it", async () => {
    const ca = readFileSync(apiCaPath(dataDir), "utf8");
    const server = readFileSync(join(apiTlsDir(dataDir), "api.crt"), "utf8");
    await p.kill("SIGTERM");
    p = await serve(dataDir, apiPort, natsPort);
    expect(readFileSync(apiCaPath(dataDir), "utf8")).toBe(ca);
    expect(readFileSync(join(apiTlsDir(dataDir), "api.crt"), "utf8")).toBe(server);
    expect(p.stderr).toContain(`caSha256=${new X509Certificate(ca).fingerprint256}`);
    expect(p.stderr).not.toContain("generated a CA");
    const res = await runShoal(["node", "list"], local());
    expect(res.code, res.stderr).toBe(0);
  });
});

describe("shoal serve on plain HTTP (API.TLS.Disable)", SLOW, () => {
  it("serves HTTP, warns, generates no CA, and the CLI that expects HTTPS says what to do", async () => {
    const dataDir = tempDir("shoal-tls-off-");
    const apiPort = await freePort();
    const p = await serve(dataDir, apiPort, await freePort(), ["-c", "API.TLS.Disable=true"]);
    expect(p.stdout).toContain(`API:  http://127.0.0.1:${apiPort}`);
    expect(p.stderr).toContain("API.TLS.Disable is set: the API serves plain HTTP");
    expect(existsSync(apiTlsDir(dataDir))).toBe(false);
    const env = { ...TLS_ON, SHOAL_DATADIR: dataDir, SHOAL_API_PORT: String(apiPort) };
    const res = await runShoal(["node", "list"], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `the Shoal API at https://127.0.0.1:${apiPort} answers plain HTTP, not HTTPS (it runs with API.TLS.Disable): ` +
        `use --api-host http://127.0.0.1:${apiPort} or -c API.TLS.Disable=true`,
    );
    const plain = await runShoal(["node", "list", "--api-host", "http://127.0.0.1"], env);
    expect(plain.code, plain.stderr).toBe(0);
    await p.kill("SIGTERM");
  });
});

describe("shoal serve with the operator's certificate files", SLOW, () => {
  it("serves them, refuses a bad pair at start, and serves replaced files after SIGHUP", async () => {
    // Certificates from two other CAs stand in for the operator's (as a company CA would issue them).
    const [first, second] = [tempDir(), tempDir()].map((dir) => {
      loadOrCreateApiTls(dir, "127.0.0.1", new Date());
      return { ca: apiCaPath(dir), cert: join(apiTlsDir(dir), "api.crt"), key: join(apiTlsDir(dir), "api.key") };
    });
    const live = tempDir();
    const files = { cert: join(live, "api.crt"), key: join(live, "api.key") };
    copyFileSync(first!.cert, files.cert);
    copyFileSync(first!.key, files.key);

    const bad = await runShoal(
      ["serve", "-c", `API.TLS.CertFile=${files.cert}`, "-c", `API.TLS.KeyFile=${second!.key}`],
      TLS_ON,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`API.TLS.KeyFile ${second!.key} is not the key of the certificate`);

    const dataDir = tempDir("shoal-tls-files-");
    const apiPort = await freePort();
    const tlsFlags = ["-c", `API.TLS.CertFile=${files.cert}`, "-c", `API.TLS.KeyFile=${files.key}`];
    const p = await serve(dataDir, apiPort, await freePort(), tlsFlags);
    expect(existsSync(apiCaPath(dataDir))).toBe(false);
    expect(p.stdout).not.toContain("API CA:");
    const env = { ...TLS_ON, SHOAL_DATADIR: dataDir, SHOAL_API_PORT: String(apiPort) };
    const withCa = (ca: string) => runShoal(["node", "list", "--api-tls-ca-cert", ca], env);
    expect((await withCa(first!.ca)).code).toBe(0);

    copyFileSync(second!.cert, files.cert);
    copyFileSync(second!.key, files.key);
    p.child.kill("SIGHUP");
    const secondCa = readFileSync(second!.ca, "utf8");
    const fingerprint = new X509Certificate(readFileSync(second!.cert)).fingerprint256;
    await waitFor(
      async () => (await presented(apiPort, secondCa).catch(() => undefined))?.fingerprint256 === fingerprint,
      10_000,
      () => `the replaced certificate served; stderr: ${p.stderr.slice(-1000)}`,
    );
    expect(p.stderr).toContain("SIGHUP: the API serves its certificate files as they are now");
    expect((await withCa(second!.ca)).code).toBe(0);
    const old = await withCa(first!.ca);
    expect(old.code).toBe(1);
    expect(old.stderr).toContain("does not trust");
    await p.kill("SIGTERM");
  });
});

describe("shoal devstack", SLOW, () => {
  it("serves HTTPS; the README's `shoal node list` finds its CA under SHOAL_DATADIR's devstack/", async () => {
    const dataDir = tempDir("shoal-tls-devstack-");
    const apiPort = await freePort();
    const p = ShoalProcess.start(
      ["devstack", "--compute", "0", ...localOrchestratorFlags({ dataDir, apiPort, natsPort: await freePort() })],
      TLS_ON,
    );
    processes.push(p);
    await p.waitForOutput("Shoal devstack is running", 90_000);
    expect(p.stdout).toContain(`API CA:  ${apiCaPath(join(dataDir, "devstack"))}`);
    const res = await runShoal(["node", "list"], {
      ...TLS_ON,
      SHOAL_API_HOST: "127.0.0.1",
      SHOAL_API_PORT: String(apiPort),
      SHOAL_DATADIR: dataDir,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^node-0 +Requester/m);
    await p.kill("SIGTERM");
  });
});
