import { randomUUID } from "node:crypto";
import { Context, Effect, Layer } from "effect";
import type { Logger } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultConfig } from "../../src/config/keys.ts";
import { EsdbEventStore } from "../../src/events/eventstoredb/esdb-event-store.ts";
import type { NewEvent, RecordedEvent } from "../../src/events/store/event-store.ts";
import { Store, storeLayer } from "../../src/orchestrator/services.ts";
import { capturedLogger } from "../support/captured-logger.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { KurrentStandIn } from "../support/kurrent-stand-in/kurrent-stand-in.ts";
import { secureStandIn, STAND_IN_USER } from "../support/kurrent-stand-in/secure-stand-in.ts";
import { waitFor } from "../support/shoal-process.ts";

const ev = (type: string): NewEvent => ({
  id: randomUUID(),
  type,
  data: { n: 1 },
  metadata: { time: "2026-01-01T00:00:00.000Z", actor: { type: "system", id: "test" } },
});

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

/** The orchestrator's start-up with the store: the head position, or what stopped it. */
const start = (url: string, logger: Logger = silentLogger) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* Layer.build(storeLayer({ ...defaultConfig(), "EventStore.URL": url }, logger));
        return yield* Effect.promise(() => Context.get(store, Store).headPosition());
      }),
    ),
  );

/** What start-up stopped with (it must stop). */
async function refusal(url: string, logger?: Logger): Promise<string> {
  const failed = await start(url, logger).then(
    () => undefined,
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  expect(failed, `start-up with ${url} must stop`).toBeDefined();
  return failed!;
}

describe("KurrentDB over TLS, with a user (the stand-in in secure mode)", () => {
  it("works with the CA file and the user in EventStore.URL: appends, reads through the native bridge, a subscription, checkpoints", async () => {
    const { standIn } = await secure();
    expect(standIn.url).toMatch(/^kurrentdb:\/\/admin:[^@]+@127\.0\.0\.1:\d+\?tls=true&tlsCAFile=/);
    expect(await start(standIn.url)).toBe(0);
    const store = await EsdbEventStore.open(standIn.url);
    closing.push(store);
    const stream = `node-${randomUUID()}`;
    const appended = await store.append(stream, [ev("NodeRegistered"), ev("NodeApproved")], "no_stream");
    expect(appended.nextExpectedRevision).toBe(1);
    expect((await store.readStream(stream)).map((e) => [e.type, e.revision])).toEqual([
      ["NodeRegistered", 0],
      ["NodeApproved", 1],
    ]);
    expect((await store.readAll()).map((e) => e.type)).toEqual(["NodeRegistered", "NodeApproved"]);
    const page = await store.readFiltered({ types: ["NodeApproved"] }, { maxCount: 10 });
    expect(page.events.map((e) => e.position)).toEqual([appended.position]);
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: appended.position }, (e) => void seen.push(e));
    const live = await store.append(stream, [ev("NodeCordoned")], 1);
    await waitFor(
      () => seen.length === 1,
      10_000,
      () => "the live event over TLS",
    );
    expect(seen[0]!.position).toBe(live.position);
    await subscription.stop();
    await store.save("tls-check", live.position);
    expect(await store.load("tls-check")).toBe(live.position);
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
    await start(standIn.url, logger);
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
