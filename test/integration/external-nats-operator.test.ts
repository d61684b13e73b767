import { join } from "node:path";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, expect, it } from "vitest";
import { commandContext } from "../../src/actors/command-context.ts";
import { writeNatsOperatorFiles } from "../../src/orchestrator/nats-operator-files.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { ORCHESTRATOR_PERMISSIONS, ORCHESTRATOR_USER } from "../../src/transport/nats-auth/nats-roles.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { newNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import { NatsOperator, joinLogin, loadOperatorKeys } from "../../src/transport/nats-jwt/nats-operator.ts";
import { JOIN_INBOX_PREFIX } from "../../src/transport/subjects.ts";
import { computeInfo, orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { jwtLoginAdmitted } from "../support/jwt-login-admitted.ts";
import { TestNatsCluster } from "../support/nats-cluster.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * An external NATS cluster with Shoal as its operator (`shoal nats-operator`): three servers with a full account
 * resolver, an orchestrator connected to one of them issuing node logins that every server admits, and a revocation
 * pushed to one server reaching them all.
 */
const TOKEN = "shoal-join_external-operator";
const SERVERS = ["n1", "n2", "n3"] as const;
let cluster: TestNatsCluster;
let orchestrator: RunningOrchestrator;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  const keysDir = join(tempDir("shoal-nats-operator-"), "operator");
  const base = { "Orchestrator.Auth.Token": TOKEN, "Orchestrator.NATS.JetStreamMaxStore": 64 * 1024 * 1024 };
  const files = writeNatsOperatorFiles(orchestratorConfig("", base), keysDir, "jwt");
  const operator = new NatsOperator(loadOperatorKeys(keysDir), { joinToken: TOKEN, jetStreamDiskBytes: 0 });
  cluster = await TestNatsCluster.start(3, {
    include: files.configFile,
    login: () => {
      const key = newNkey("user");
      return {
        authenticator: jwtLogin(operator.issueUser(key.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS), key),
      };
    },
  });
  cleanups.push(() => cluster.stop());
  orchestrator = await startOrchestrator(
    orchestratorConfig(cluster.url("n1"), { ...base, "Orchestrator.NATS.OperatorDir": keysDir }),
    silentLogger,
  );
  cleanups.push(() => orchestrator.stop());
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

it("admits a node joined through one server on every server, and cuts it off everywhere once rejected", async () => {
  const key = newNkey("user");
  const joining = await connect({
    servers: cluster.url("n1"),
    authenticator: joinLogin(TOKEN),
    inboxPrefix: JOIN_INBOX_PREFIX,
    reconnect: false,
  });
  const reply = await new ComputeClient(joining, "edge-1").join(computeInfo("edge-1"), key, TOKEN);
  await joining.close();
  expect(reply).toMatchObject({ Accepted: true });
  const jwt = reply.UserJWT!;
  for (const server of SERVERS) expect(await jwtLoginAdmitted(cluster.url(server), jwt, key)).toBe(true);

  const live: NatsConnection = await connect({
    servers: cluster.url("n3"),
    authenticator: jwtLogin(jwt, key),
    reconnect: false,
  });
  cleanups.push(() => live.close());
  const dropped = live.closed();

  await orchestrator.manager.operatorAction("reject", "edge-1", commandContext({ type: "operator", id: "alice" }));
  // Server 1 applied it when the call returned; the others have it from their resolver's peers.
  expect(await jwtLoginAdmitted(cluster.url("n1"), jwt, key)).toBe(false);
  await waitFor(async () => !(await jwtLoginAdmitted(cluster.url("n2"), jwt, key)), 10_000);
  await waitFor(async () => !(await jwtLoginAdmitted(cluster.url("n3"), jwt, key)), 10_000);
  await expect(Promise.race([dropped.then(() => "dropped"), sleep(10_000).then(() => "still open")])).resolves.toBe(
    "dropped",
  );
}, 60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
