import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../support/fixtures.ts";
import { secureStandIn, STAND_IN_USER } from "../support/kurrent-stand-in/secure-stand-in.ts";
import { LocalServe } from "../support/local-serve.ts";

const running: LocalServe[] = [];
const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const serve of running.splice(0)) if (serve.running) await serve.kill("SIGTERM");
  for (const c of closing.splice(0)) await c.close();
});

/** A `shoal serve` in a new DataDir on the store at `url`, given in its environment as compose gives it. */
function serveOn(url: string): LocalServe {
  const serve = new LocalServe(tempDir(), [], { SHOAL_EVENTSTORE_URL: url });
  running.push(serve);
  return serve;
}

describe("shoal serve on KurrentDB over TLS, with a user (the secure stand-in)", () => {
  it("runs on it, and stops with the fix named when it does not trust the server; the password shown by neither", async () => {
    const { standIn, caFile } = await secureStandIn();
    closing.push(standIn);
    const ok = await serveOn(standIn.url).start();
    expect(ok.stdout + ok.stderr).toContain("using KurrentDB");

    const otherCa = (await secureStandIn()).caFile;
    const refused = serveOn(standIn.url.replace(encodeURIComponent(caFile), encodeURIComponent(otherCa)));
    await expect(refused.start()).rejects.toThrow(/exited \(1\)/);
    expect(refused.process!.stderr).toContain(
      `presents a certificate this client does not trust (unable to verify the first certificate): ` +
        `tlsCAFile=${otherCa} is not the CA that signed it`,
    );
    for (const text of [ok.stdout, ok.stderr, refused.process!.stdout, refused.process!.stderr])
      expect(text).not.toContain(STAND_IN_USER.password);
  }, 180_000);
});
