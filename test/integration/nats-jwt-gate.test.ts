import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type NatsConnection } from "nats";
import { afterAll, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/fs/write-file-atomic.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../../src/transport/embedded-nats-server.ts";
import { operatorModeServerConfig } from "../../src/transport/nats-auth/nats-server-config.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { NatsJwtGate } from "../../src/transport/nats-jwt/nats-jwt-gate.ts";
import { newNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import { NatsOperator, loadOrCreateOperatorKeys, revocationsIn } from "../../src/transport/nats-jwt/nats-operator.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { jwtLoginAdmitted } from "../support/jwt-login-admitted.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * The gate the orchestrator's node manager drives on its own nats-server (operator mode): the
 * guarantees NatsAccess gave with config users and reloads, with JWT users and revocations.
 */
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

it("issues JWTs only for live keys, revokes on unbinding (the server drops the node, the config keeps it out across a restart) and pushes again after a failed push", async () => {
  const dir = tempDir("shoal-nats-jwt-gate-");
  const port = await freePort();
  const keys = loadOrCreateOperatorKeys(join(dir, "credentials"));
  const operator = new NatsOperator(keys, { joinToken: "join-me", jetStreamDiskBytes: 64 * 1024 * 1024 });
  const settings = {
    host: "127.0.0.1",
    port,
    serverName: "t",
    ...embeddedNatsPaths(dir),
    maxFileStoreBytes: 64 * 1024 * 1024,
  };
  const file = join(dir, "nats-server.conf");
  const target: { writeConfig: () => void; system: NatsConnection | undefined } = {
    writeConfig: () => writeFileAtomic(file, operatorModeServerConfig(settings, operator.serverConfig()), 0o600),
    system: undefined,
  };
  target.writeConfig();
  let server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile: file });
  cleanups.push(() => server.stop());
  const gate = new NatsJwtGate(operator, target, silentLogger);
  const a = newNkey("user");
  const b = newNkey("user");

  await gate.replaceAll([["node-a", a.publicKey]]);
  await gate.apply("node-b", b.publicKey);
  expect(gate.boundNodes).toBe(2);
  // A JWT only for the key bound to that node id: never another node's, never a stranger's.
  expect(gate.userJwtFor("node-a", b.publicKey)).toBeUndefined();
  expect(gate.userJwtFor("node-c", newNkey("user").publicKey)).toBeUndefined();
  const jwtA = gate.userJwtFor("node-a", a.publicKey)!;
  const jwtB = gate.userJwtFor("node-b", b.publicKey)!;
  expect(await jwtLoginAdmitted(server.url, jwtA, a)).toBe(true);
  const liveB = await connect({ servers: server.url, authenticator: jwtLogin(jwtB, b), reconnect: false });
  const closedB = liveB.closed();

  // No system connection yet: the revocation is written but cannot be pushed; the next call pushes it.
  await gate.apply("node-b", undefined);
  expect(gate.userJwtFor("node-b", b.publicKey)).toBeUndefined();
  expect([
    ...revocationsIn(readFileSync(file, "utf8"), keys.operatorSigner.publicKey, operator.account).keys(),
  ]).toEqual([b.publicKey]);
  expect(await jwtLoginAdmitted(server.url, jwtB, b)).toBe(true);
  target.system = await connect({ servers: server.url, authenticator: operator.systemLogin() });
  cleanups.push(() => target.system!.close());
  // Nothing new for node-b, but the server is behind: the same call pushes now.
  const working = target.system;
  const lost = await connect({ servers: server.url, authenticator: operator.systemLogin() });
  await lost.close();
  target.system = lost;
  await expect(gate.apply("node-a", undefined)).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
  target.system = working;
  await gate.apply("node-a", undefined);
  await closedB;
  expect(await jwtLoginAdmitted(server.url, jwtB, b)).toBe(false);
  expect(await jwtLoginAdmitted(server.url, jwtA, a)).toBe(false);

  // Bound again (an approval): a JWT issued now gets in, the old one stays out.
  await gate.apply("node-a", a.publicKey);
  const again = gate.userJwtFor("node-a", a.publicKey)!;
  await waitFor(
    () => jwtLoginAdmitted(server.url, again, a),
    5000,
    () => "the new JWT admitted",
  );
  expect(await jwtLoginAdmitted(server.url, jwtA, a)).toBe(false);

  // Keys the store shows revoked: only those not live and not revoked already get a new entry.
  const c = newNkey("user");
  const entriesBefore = new Map(operator.revocations);
  await gate.revokeStale([a.publicKey, b.publicKey, c.publicKey]);
  expect(operator.revocations.get(b.publicKey)).toBe(entriesBefore.get(b.publicKey));
  expect(operator.revocations.get(a.publicKey)).toBe(entriesBefore.get(a.publicKey));
  expect(operator.revocations.has(c.publicKey)).toBe(true);

  // A restarted server reads the revocations from the config.
  await target.system.close();
  await server.stop();
  server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile: file });
  expect(await jwtLoginAdmitted(server.url, jwtB, b)).toBe(false);
  expect(await jwtLoginAdmitted(server.url, again, a)).toBe(true);
});
