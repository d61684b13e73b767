import { X509Certificate } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { USAGE_OIDS } from "../../src/security/tls/issue-certificate.ts";
import { tempDir } from "../support/fixtures.ts";
import { runShoal } from "../support/shoal-process.ts";

const certificate = (dir: string, name: string) => new X509Certificate(readFileSync(join(dir, `${name}.crt`)));

describe("shoal tls issue", () => {
  it("refuses bad arguments with what is wrong, and writes nothing", async () => {
    const out = join(tempDir("shoal-tls-cli-"), "tls");
    const cases: [string[], string][] = [
      [["tls"], "Usage: shoal tls <command>"],
      [["tls", "issue"], "--out DIR is required"],
      [["tls", "issue", "--out", out, "--server", "nats-1"], "--server: expected NAME=HOST[,HOST...]"],
      [["tls", "issue", "--out", out, "--server", "nats-1=nats 1"], '"nats 1" is neither a DNS name nor an IP'],
      [["tls", "issue", "--out", out, "--server", "nats-1=*.example.com"], "is neither a DNS name nor an IP"],
      [["tls", "issue", "--out", out, "--server", "../x=host"], "NAME must be letters, digits"],
      [["tls", "issue", "--out", out, "--client", "ca"], '"ca" is the CA\'s own file'],
      [["tls", "issue", "--out", out, "--server", "a=a", "--client", "A"], "a is given twice"],
      [["tls", "issue", "--out", out, "--kurrentdb-node", "kdb-1"], "--kurrentdb-node: expected NAME=HOST[,HOST...]"],
      [["tls", "issue", "--out", out, "--kurrentdb-node", "kdb-1=kdb_1"], '--kurrentdb-node kdb-1: "kdb_1" is neither'],
      [["tls", "issue", "--out", out, "--server", "a=a", "--kurrentdb-node", "a=b"], "a is given twice"],
      [["tls", "issue", "--out", out, "--days", "3"], "Unknown option '--days'"],
    ];
    for (const [args, message] of cases) {
      const run = await runShoal(args);
      expect(run.stderr, args.join(" ")).toContain(message);
      expect(run.code, args.join(" ")).toBe(2);
    }
    expect(existsSync(out)).toBe(false);
    const help = await runShoal(["tls", "issue", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: shoal tls issue --out DIR/);
  }, 60_000);

  it("makes a CA, server certificates for their hosts and a client certificate; keeps them when run again", async () => {
    const out = join(tempDir("shoal-tls-cli-"), "tls");
    const first = await runShoal([
      ...["tls", "issue", "--out", out, "--server", "nats-1=nats-1,localhost,127.0.0.1"],
      ...["--server", "nats-2=nats-2,::1", "--client", "orchestrator"],
    ]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Created the CA ${join(out, "ca.crt")}`);
    expect(readdirSync(out).sort()).toEqual(
      ["ca", "nats-1", "nats-2", "orchestrator"].flatMap((n) => [`${n}.crt`, `${n}.key`]),
    );
    expect(statSync(out).mode & 0o777).toBe(0o700);
    for (const key of readdirSync(out).filter((f) => f.endsWith(".key")))
      expect(statSync(join(out, key)).mode & 0o777, key).toBe(0o600);
    const ca = certificate(out, "ca");
    expect(ca.ca).toBe(true);
    expect(first.stdout).toContain(ca.fingerprint256);
    for (const name of ["nats-1", "nats-2", "orchestrator"]) {
      const cert = certificate(out, name);
      expect(cert.checkIssued(ca) && cert.verify(ca.publicKey), name).toBe(true);
      expect(cert.subject, name).toContain(`CN=${name}`);
    }
    // A server's certificate is also its client side on the cluster routes, which nats-server verifies.
    expect(certificate(out, "nats-1").keyUsage).toEqual([USAGE_OIDS.server, USAGE_OIDS.client]);
    expect(certificate(out, "orchestrator").keyUsage).toEqual([USAGE_OIDS.client]);
    expect(certificate(out, "nats-1").checkHost("nats-1")).toBe("nats-1");
    expect(certificate(out, "nats-1").checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(certificate(out, "nats-2").checkIP("::1")).toBe("::1");
    expect(certificate(out, "nats-2").checkHost("nats-1")).toBeUndefined();

    const files = (names: string[]) => names.map((n) => readFileSync(join(out, n), "utf8"));
    const before = files(["ca.crt", "ca.key", "nats-1.crt", "orchestrator.key"]);
    const again = await runShoal([
      ...["tls", "issue", "--out", out, "--server", "nats-1=nats-1,localhost,127.0.0.1"],
      ...["--server", "nats-2=nats-2,nats-2.example.com", "--client", "orchestrator"],
    ]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Kept the CA ${join(out, "ca.crt")}`);
    expect(files(["ca.crt", "ca.key", "nats-1.crt", "orchestrator.key"])).toEqual(before);
    // A host added: a new certificate from the same CA.
    expect(again.stdout).toContain("Issued server certificate");
    expect(again.stdout).toContain("the one there was replaced: it does not cover nats-2.example.com");
    expect(certificate(out, "nats-2").checkHost("nats-2.example.com")).toBe("nats-2.example.com");
    expect(certificate(out, "nats-2").checkIssued(ca)).toBe(true);
  }, 60_000);

  it("never replaces a CA it cannot use: half of it missing stops it before anything is written", async () => {
    const out = join(tempDir("shoal-tls-cli-"), "tls");
    expect((await runShoal(["tls", "issue", "--out", out])).code).toBe(0);
    rmSync(join(out, "ca.key"));
    const run = await runShoal(["tls", "issue", "--out", out, "--client", "orchestrator"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: ${join(out, "ca.key")} is missing beside ${join(out, "ca.crt")}`);
    expect(readdirSync(out)).toEqual(["ca.crt"]);
  }, 60_000);
});
