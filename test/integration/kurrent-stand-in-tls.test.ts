import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { capturedLogger } from "../support/captured-logger.ts";
import { tempDir } from "../support/fixtures.ts";
import { KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";
import { secureStandIn, STAND_IN_USER } from "../support/kurrent-stand-in/secure-stand-in.ts";
import { startStore } from "../support/kurrent-stand-in/store-start-up.ts";
import { testCa, testServerCertificate } from "../support/test-certificates.ts";

const DAY = 24 * 3600 * 1000;

const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of closing.splice(0).reverse()) await c.close();
});

async function secure(options: Parameters<typeof secureStandIn>[0] = {}) {
  const made = await secureStandIn(options);
  closing.push(made.standIn);
  return made;
}

/** What start-up stopped with (it must stop). */
async function refusal(url: string, logger?: Logger): Promise<string> {
  const failed = await startStore(url, logger).then(
    () => undefined,
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  expect(failed, `start-up with ${url} must stop`).toBeDefined();
  return failed!;
}

describe("KurrentDB over TLS, with a user (the stand-in in secure mode)", () => {
  // The store's behaviour over TLS with a user is the contract's (test/contract/kurrent-stand-in-event-store.test.ts).
  it("starts the orchestrator's store with the CA file and the user in EventStore.URL", async () => {
    const { standIn } = await secure();
    expect(standIn.url).toMatch(/^kurrentdb:\/\/admin:[^@]+@127\.0\.0\.1:\d+\?tls=true&tlsCAFile=/);
    expect(await startStore(standIn.url)).toBe(0);
    // Its probe write went through, logged in.
    expect(standIn.appendAttempts.map((a) => a.stream)).toContain("shoal-checkpoint-writable-check");
  });

  it("stops start-up naming the fix when the CA is not the server's, or none is named, and writes nothing", async () => {
    const { standIn, caFile } = await secure();
    const otherCa = (await secure()).caFile;
    const wrongCa = await refusal(standIn.url.replace(encodeURIComponent(caFile), encodeURIComponent(otherCa)));
    expect(wrongCa).toContain("presents a certificate this client does not trust");
    expect(wrongCa).toContain(`tlsCAFile=${otherCa} is not the CA that signed it; name that CA's certificate`);
    const noCa = await refusal(standIn.url.replace(/&tlsCAFile=[^&]*/, ""));
    expect(noCa).toContain("name the CA that signed it in EventStore.URL (tlsCAFile=/path/to/ca.crt)");
    expect(standIn.appendAttempts).toEqual([]);
  });

  it("stops start-up naming the fix when the certificate is for other names, or has ended", async () => {
    const elsewhere = (await secure({ hosts: ["kurrentdb-1.example"] })).standIn;
    const otherNames = await refusal(elsewhere.url);
    expect(otherNames).toContain("presents a certificate for other names");
    expect(otherNames).toContain("name each server in EventStore.URL by a name its certificate covers");
    const dir = tempDir("shoal-kurrent-tls-");
    const ca = testCa(new Date(Date.now() - 3 * DAY));
    const ended = testServerCertificate(ca, ["127.0.0.1"], {
      from: new Date(Date.now() - 2 * DAY),
      to: new Date(Date.now() - DAY),
    });
    writeFileSync(join(dir, "ca.crt"), ca.pem);
    const old = await KurrentStandIn.start({
      version: "24.10.4",
      tls: {
        cert: ended.pem,
        key: ended.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
        caFile: join(dir, "ca.crt"),
      },
    });
    closing.push(old);
    expect(await refusal(old.url)).toContain("presents a certificate outside its validity (certificate has expired)");
    expect([elsewhere.appendAttempts, old.appendAttempts]).toEqual([[], []]);
  });

  it("stops start-up naming the fix for tls=false against a server that speaks TLS, and TLS against one that does not", async () => {
    const { standIn, caFile } = await secure();
    const plainToTls = await refusal(standIn.url.replace(/\?.*$/, "?tls=false"));
    expect(plainToTls).toMatch(
      /^cannot use KurrentDB: KurrentDB at kurrentdb:\/\/127\.0\.0\.1:\d+\?tls=false speaks TLS/,
    );
    expect(plainToTls).toContain("say tls=true and name the CA that signed the server's certificate");
    const plain = await KurrentStandIn.start();
    closing.push(plain);
    const tlsToPlain = await refusal(plain.url.replace("tls=false", `tls=true&tlsCAFile=${caFile}`));
    expect(tlsToPlain).toContain("does not speak TLS, but EventStore.URL asks for it");
    expect(standIn.appendAttempts).toEqual([]);
    expect(plain.appendAttempts).toEqual([]);
  });

  it("stops start-up naming the fix for a wrong password or no user, and writes nothing", async () => {
    const { standIn } = await secure();
    const wrong = await refusal(standIn.url.replace(`:${STAND_IN_USER.password}@`, ":wrong-password@"));
    expect(wrong).toContain("refused the user admin of EventStore.URL");
    expect(wrong).toContain("give the password of a member of $admins");
    expect(wrong).not.toContain("wrong-password");
    const none = await refusal(standIn.url.replace(`admin:${STAND_IN_USER.password}@`, ""));
    expect(none).toContain("requires a user (access denied) and EventStore.URL names none");
    const userAlone = await refusal(standIn.url.replace(`admin:${STAND_IN_USER.password}@`, "admin@"));
    expect(userAlone).toContain("names a user without a password: give both");
    expect(standIn.appendAttempts).toEqual([]);
  });

  it("refuses a password the client's two halves would read differently, before connecting", async () => {
    const { standIn } = await secure();
    for (const password of ["pa%2Fss", "p/ss", "a+b=c"]) {
      const url = standIn.url.replace(`:${STAND_IN_USER.password}@`, `:${password}@`);
      const message = await refusal(url);
      expect(message, password).toContain("may be made of letters, digits and - . _ ~ only");
      expect(message, password).not.toContain(password);
    }
  });

  it("never shows the password in the log or in any error, whether start-up succeeds or not", async () => {
    const { standIn, caFile } = await secure();
    const { logger, records } = capturedLogger();
    const warned = vi.spyOn(console, "warn");
    const password = STAND_IN_USER.password;
    await startStore(standIn.url, logger);
    expect(records.some((r) => r.msg === "using KurrentDB")).toBe(true);
    const messages = [
      await refusal(standIn.url.replace(encodeURIComponent(caFile), encodeURIComponent(tempDir())), logger),
      await refusal(standIn.url.replace(/\?.*$/, "?tls=false"), logger),
      await refusal(standIn.url.replace(/127\.0\.0\.1:\d+/, "127.0.0.1:1"), logger),
      // A port the native bridge refuses, quoting the whole connection string.
      await refusal(standIn.url.replace(/:\d+\?/, ":99999?"), logger),
      // An option the client does not know, which it would print on stderr with the whole connection string.
      await refusal(`${standIn.url}&tlsCaFlie=${caFile}`, logger),
    ];
    expect(messages[3]).toMatch(/^cannot use KurrentDB: invalid EventStore.URL kurrentdb:\/\/127\.0\.0\.1:99999\?/);
    expect(messages[4]).toContain('unknown option "tlsCaFlie"; known: tls, tlsCAFile, tlsVerifyCert');
    for (const text of [...messages, JSON.stringify(records), ...warned.mock.calls.flat().map(String)]) {
      expect(text).not.toContain(password);
      expect(text).not.toContain(`admin:`);
    }
  });
});
