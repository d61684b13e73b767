import { join } from "node:path";
import { Empty, connect, nkeyAuthenticator, nkeys } from "nats";
import { afterAll, expect, it } from "vitest";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../../src/transport/embedded-nats-server.ts";
import { NatsAccess } from "../../src/transport/nats-auth/nats-access.ts";
import { ORCHESTRATOR_USER } from "../../src/transport/nats-auth/nats-roles.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const secrets = { orchestratorPassword: "orchestrator-pw", joinToken: "join-me", readerPassword: "reader-pw" };

async function admits(url: string, seed: Uint8Array): Promise<boolean> {
  try {
    await (await connect({ servers: url, authenticator: nkeyAuthenticator(seed), reconnect: false })).close();
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === "AUTHORIZATION_VIOLATION") return false;
    throw e;
  }
}

it("retries a reload that failed when the same key is applied again, and keeps the admitted keys across a restart", async () => {
  const dir = tempDir("shoal-nats-access-");
  const port = await freePort();
  const settings = { host: "127.0.0.1", port, serverName: "t", ...embeddedNatsPaths(dir), maxFileStoreBytes: 64 * 1024 * 1024 };
  const file = join(dir, "nats-server.conf");
  const access = NatsAccess.create(file, settings, secrets, silentLogger);
  access.write();
  const server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile: file });
  cleanups.push(() => server.stop());
  const self = await connect({ servers: server.url, user: ORCHESTRATOR_USER, pass: secrets.orchestratorPassword });
  cleanups.push(() => self.close());
  let failNext = true;
  access.attach({
    url: server.url,
    reload: () => {
      if (failNext) {
        failNext = false;
        throw new Error("signal lost");
      }
      server.reload();
    },
    jetStreamAnswers: async () => void (await self.request("$JS.API.INFO", Empty, { timeout: 1000 })),
  });

  const pair = nkeys.createUser();
  await expect(access.apply("node-1", pair.getPublicKey())).rejects.toThrow("signal lost");
  expect(await admits(server.url, pair.getSeed())).toBe(false);
  // Nothing new to apply, but the server is behind: the same call reloads again.
  await access.apply("node-1", pair.getPublicKey());
  expect(await admits(server.url, pair.getSeed())).toBe(true);

  // A restarted orchestrator starts from the file it left: node-1 stays in until the store says otherwise.
  const again = NatsAccess.create(file, settings, secrets, silentLogger);
  expect(again.boundNodes).toBe(1);
  again.write();
  await server.stop();
  const restarted = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile: file });
  cleanups.push(() => restarted.stop());
  expect(await admits(restarted.url, pair.getSeed())).toBe(true);
});
