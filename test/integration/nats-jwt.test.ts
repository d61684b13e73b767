import { statSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type Authenticator, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/fs/write-file-atomic.ts";
import { EmbeddedNatsServer, embeddedNatsPaths } from "../../src/transport/embedded-nats-server.ts";
import { ORCHESTRATOR_PERMISSIONS, nodePermissions } from "../../src/transport/nats-auth/nats-roles.ts";
import { decodeJwt, userJwt } from "../../src/transport/nats-jwt/nats-jwt.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { newNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import {
  NatsOperator,
  joinLogin,
  joinSigner,
  loadOrCreateOperatorKeys,
  pushAccountJwt,
  revocationsIn,
  shoalAccountKey,
  type NatsOperatorKeys,
} from "../../src/transport/nats-jwt/nats-operator.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";

/**
 * nats-server 2.9 in operator mode, with Shoal as the operator: users are admitted by signing
 * JWTs, never by changing the server's configuration.
 */
const JOIN_TOKEN = "shoal-join_test-token";
const dir = tempDir("shoal-nats-jwt-");
const configFile = join(dir, "nats-server.conf");
let keys: NatsOperatorKeys;
let operator: NatsOperator;
let server: EmbeddedNatsServer;
const open: NatsConnection[] = [];

function writeConfig(port: number): void {
  const { pidFile, storeDir } = embeddedNatsPaths(dir);
  const config = {
    server_name: "jwt-test",
    listen: `127.0.0.1:${port}`,
    pid_file: pidFile,
    jetstream: { store_dir: storeDir, max_file_store: 64 * 1024 * 1024 },
    ...operator.serverConfig(),
  };
  writeFileAtomic(configFile, JSON.stringify(config), 0o600);
}

async function login(authenticator: Authenticator): Promise<NatsConnection> {
  const nc = await connect({ servers: server.url, authenticator, reconnect: false });
  open.push(nc);
  return nc;
}

async function refused(authenticator: Authenticator): Promise<boolean> {
  try {
    await (await connect({ servers: server.url, authenticator, reconnect: false })).close();
    return false;
  } catch (e) {
    if ((e as { code?: string }).code === "AUTHORIZATION_VIOLATION") return true;
    throw e;
  }
}

/** Permission violations the server reported to this connection, after a round trip. */
async function violations(nc: NatsConnection, act: () => void): Promise<string[]> {
  const seen: string[] = [];
  const watch = (async () => {
    for await (const s of nc.status()) if (s.type === "error") seen.push(String(s.data));
  })();
  void watch;
  act();
  await nc.flush();
  await new Promise((r) => setTimeout(r, 100));
  await nc.flush();
  return seen;
}

function nodeLogin(nodeId: string) {
  const key = newNkey("user");
  return { key, login: jwtLogin(operator.issueUser(key.publicKey, nodeId, nodePermissions(nodeId)), key) };
}

beforeAll(async () => {
  keys = loadOrCreateOperatorKeys(join(dir, "credentials"));
  operator = new NatsOperator(keys, { joinToken: JOIN_TOKEN, jetStreamDiskBytes: 64 * 1024 * 1024 });
  const port = await freePort();
  writeConfig(port);
  server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile });
});

afterAll(async () => {
  for (const nc of open) await nc.close().catch(() => undefined);
  await server.stop();
});

describe("Shoal as the NATS operator", () => {
  it("keeps its keys as 0600 files and finds the same ones again", () => {
    const again = loadOrCreateOperatorKeys(join(dir, "credentials"));
    expect(again.accountSigner.publicKey).toBe(keys.accountSigner.publicKey);
    for (const file of [
      "nats-operator.nk",
      "nats-operator-signer.nk",
      "nats-system-account.nk",
      "nats-system-signer.nk",
      "nats-account-signer.nk",
    ]) {
      expect(statSync(join(dir, "credentials", file)).mode & 0o777).toBe(0o600);
    }
    expect(readFileSync(join(dir, "credentials", "nats-account-signer.nk"), "utf8")).toMatch(/^SA/);
    // The account itself is named by the join token, so a joining node can name it too.
    expect(operator.account).toBe(shoalAccountKey(JOIN_TOKEN).publicKey);
  });

  it("writes JWTs nats-server's format describes: nkey-signed, typed, versioned", () => {
    const key = newNkey("user");
    const claims = decodeJwt(operator.issueUser(key.publicKey, "edge-1", nodePermissions("edge-1")));
    expect(claims).toMatchObject({
      iss: keys.accountSigner.publicKey,
      sub: key.publicKey,
      name: "edge-1",
      nats: { type: "user", version: 2, issuer_account: operator.account },
    });
    expect(claims.jti).toMatch(/^[A-Z2-7]{52}$/);
    const tampered = operator
      .issueUser(key.publicKey, "edge-1", nodePermissions("edge-1"))
      .replace(/\.[^.]+\./, `.${Buffer.from(JSON.stringify({ ...claims, name: "x" })).toString("base64url")}.`);
    expect(() => decodeJwt(tampered)).toThrow("signature");
  });

  it("admits a node whose key the account signed, with only that node's subjects", async () => {
    const { login: nodeAuth } = nodeLogin("edge-1");
    const nc = await login(nodeAuth);
    // Its own subjects work…
    const own = await violations(nc, () => {
      nc.publish("shoal.compute.edge-1.heartbeat");
      nc.subscribe("_INBOX_NODE.edge-1.>");
    });
    expect(own).toEqual([]);
    // …another node's, the cluster events and JetStream do not.
    for (const act of [
      () => nc.publish("shoal.compute.edge-2.heartbeat"),
      () => nc.publish("shoal.events.node"),
      () => nc.publish("$JS.API.INFO"),
      () => nc.subscribe("_INBOX_NODE.edge-2.>"),
      () => nc.subscribe("shoal.compute.>"),
    ]) {
      expect(await violations(nc, act)).toContain("PERMISSIONS_VIOLATION");
    }
  });

  it("refuses a key with no JWT, a JWT for another key, and a JWT not signed by the account's signing key", async () => {
    const key = newNkey("user");
    // Signed by the account's identity key, which every holder of the join token can derive: strict usage refuses it.
    expect(
      await refused(
        jwtLogin(userJwt(shoalAccountKey(JOIN_TOKEN), key.publicKey, "edge-1", nodePermissions("edge-1")), key),
      ),
    ).toBe(true);
    expect(
      await refused(
        jwtLogin(
          userJwt(shoalAccountKey(JOIN_TOKEN), key.publicKey, "edge-1", nodePermissions("edge-1"), {
            issuerAccount: operator.account,
          }),
          key,
        ),
      ),
    ).toBe(true);
    const other = newNkey("user");
    expect(await refused(jwtLogin(operator.issueUser(other.publicKey, "edge-1", nodePermissions("edge-1")), key))).toBe(
      true,
    );
    const stranger = newNkey("account");
    expect(await refused(jwtLogin(userJwt(stranger, key.publicKey, "edge-1", nodePermissions("edge-1")), key))).toBe(
      true,
    );
    expect(await refused(() => ({ nkey: key.publicKey, sig: "" }))).toBe(true);
    expect(await refused(() => ({ user: "shoal-orchestrator", pass: "" }))).toBe(true);
  });

  it("lets the orchestrator use JetStream in the account", async () => {
    const key = newNkey("user");
    const nc = await login(
      jwtLogin(operator.issueUser(key.publicKey, "shoal-orchestrator", ORCHESTRATOR_PERMISSIONS), key),
    );
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: "JWT_TEST", subjects: ["jwt-test.>"] });
    const ack = await nc.jetstream().publish("jwt-test.one", new TextEncoder().encode("x"));
    expect(ack.seq).toBe(1);
    expect((await jsm.getAccountInfo()).limits.max_storage).toBe(64 * 1024 * 1024);
  });

  it("admits holders of the join token to ask to join, and nothing more, whatever their JWT claims", async () => {
    const nc = await login(joinLogin(JOIN_TOKEN));
    expect(await violations(nc, () => nc.publish("shoal.join.edge-9"))).toEqual([]);
    expect(await violations(nc, () => nc.subscribe("_INBOX_JOIN.abc.>"))).toEqual([]);
    expect(await violations(nc, () => nc.publish("shoal.compute.edge-9.heartbeat"))).toContain("PERMISSIONS_VIOLATION");
    expect(await violations(nc, () => nc.subscribe("shoal.join.*"))).toContain("PERMISSIONS_VIOLATION");

    // A token holder signing itself the orchestrator's permissions gets the join template all the same.
    // Signed by the token's key but naming no account: nobody.
    const greedy = newNkey("user");
    expect(
      await refused(
        jwtLogin(userJwt(joinSigner(JOIN_TOKEN), greedy.publicKey, "greedy", ORCHESTRATOR_PERMISSIONS), greedy),
      ),
    ).toBe(true);
    const scopedClaimsMore = newNkey("user");
    const greedyAuth = jwtLogin(
      // The scoped signer's JWT, naming the account, with permissions of its own.
      (() => {
        const jwt = userJwt(joinSigner(JOIN_TOKEN), scopedClaimsMore.publicKey, "greedy", undefined, {
          issuerAccount: operator.account,
          scoped: true,
        });
        const [h, p] = jwt.split(".");
        const claims = JSON.parse(Buffer.from(p!, "base64url").toString()) as { nats: Record<string, unknown> };
        claims.nats = { ...claims.nats, pub: { allow: [">"] }, sub: { allow: [">"] } };
        const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
        const sig = Buffer.from(joinSigner(JOIN_TOKEN).sign(new TextEncoder().encode(`${h}.${body}`))).toString(
          "base64url",
        );
        return `${h}.${body}.${sig}`;
      })(),
      scopedClaimsMore,
    );
    // nats-server 2.9 admits it with the template's permissions (a later one may refuse it outright).
    const greedyConn = await connect({ servers: server.url, authenticator: greedyAuth, reconnect: false }).catch(
      () => undefined,
    );
    if (greedyConn) {
      open.push(greedyConn);
      expect(await violations(greedyConn, () => greedyConn.subscribe("shoal.events.>"))).toContain(
        "PERMISSIONS_VIOLATION",
      );
      expect(await violations(greedyConn, () => greedyConn.publish("shoal.compute.edge-1.heartbeat"))).toContain(
        "PERMISSIONS_VIOLATION",
      );
    }

    // Another token's signer is nobody.
    expect(await refused(joinLogin("another-token"))).toBe(true);
  });

  it("cuts a revoked node off at once and refuses its login, until a later JWT; a restart keeps the revocation", async () => {
    const { key, login: nodeAuth } = nodeLogin("edge-5");
    const nc = await login(nodeAuth);
    const closed = nc.closed();
    const system = await login(operator.systemLogin());
    operator.revoke([key.publicKey]);
    await pushAccountJwt(system, operator.account, operator.accountJwt());
    const why = await Promise.race([closed, new Promise((r) => setTimeout(() => r("still connected"), 5000))]);
    expect(String(why)).toMatch(/revoked/i);
    expect(await refused(nodeAuth)).toBe(true);

    // JetStream stays on for the account after the update.
    const orch = newNkey("user");
    const onc = await login(
      jwtLogin(operator.issueUser(orch.publicKey, "shoal-orchestrator", ORCHESTRATOR_PERMISSIONS), orch),
    );
    expect((await (await onc.jetstreamManager()).getAccountInfo()).streams).toBeGreaterThanOrEqual(0);

    // A restarted server reads the revocation from its config: written, not reloaded; and a
    // restarted orchestrator reads it back from there.
    writeConfig(Number(new URL(server.url).port));
    const carried = revocationsIn(readFileSync(configFile, "utf8"), keys.operatorSigner.publicKey, operator.account);
    expect([...carried.keys()]).toEqual([key.publicKey]);
    expect(revocationsIn(readFileSync(configFile, "utf8"), newNkey("operator").publicKey, operator.account).size).toBe(
      0,
    );
    const pid = server.pid;
    process.kill(pid!, "SIGKILL");
    for (let i = 0; i < 200 && (server.pid === pid || !server.state.running); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(server.state.running).toBe(true);
    expect(await refused(nodeAuth)).toBe(true);
    // Joined again later, the same key gets a JWT issued after the revocation, and is let in.
    const again = await login(jwtLogin(operator.issueUser(key.publicKey, "edge-5", nodePermissions("edge-5")), key));
    expect(again.isClosed()).toBe(false);
  }, 30_000);

  it("admits many nodes one after another with no configuration change and no reload", async () => {
    const before = { pid: server.pid, restarts: server.restarts, config: readFileSync(configFile, "utf8") };
    for (let i = 0; i < 200; i++) {
      const { login: nodeAuth } = nodeLogin(`many-${i}`);
      await (await connect({ servers: server.url, authenticator: nodeAuth, reconnect: false })).close();
    }
    expect(server.pid).toBe(before.pid);
    expect(server.restarts).toBe(before.restarts);
    expect(readFileSync(configFile, "utf8")).toBe(before.config);
  }, 30_000);
});
