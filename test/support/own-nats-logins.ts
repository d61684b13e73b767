import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type ConnectionOptions, type NatsConnection } from "nats";
import { loadOrCreateNodeKey } from "../../src/compute/node-key.ts";
import type { RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { ORCHESTRATOR_PERMISSIONS, ORCHESTRATOR_USER } from "../../src/transport/nats-auth/nats-roles.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { newNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import { NatsOperator, loadOrCreateOperatorKeys } from "../../src/transport/nats-jwt/nats-operator.ts";

/**
 * Connections to an orchestrator's own nats-server with the logins its nodes and the orchestrator
 * itself hold (no reconnects), for tests that play a node or the orchestrator; closed together.
 */
export class OwnNatsLogins {
  private readonly open: NatsConnection[] = [];

  constructor(
    private readonly orchestrator: () => { readonly running: RunningOrchestrator; readonly dataDir: string },
  ) {}

  async login(options: Partial<ConnectionOptions>): Promise<NatsConnection> {
    const nc = await connect({ servers: this.orchestrator().running.natsUrl, reconnect: false, ...options });
    this.open.push(nc);
    return nc;
  }

  /** As the node `id` that joined with its DataDir `dataDir`: its JWT and nkey from there. */
  asNode(id: string, dataDir: string): Promise<NatsConnection> {
    const jwt = readFileSync(join(dataDir, "credentials", `${id}.jwt`), "utf8").trim();
    return this.login({
      authenticator: jwtLogin(jwt, loadOrCreateNodeKey(dataDir, id)),
      inboxPrefix: `_INBOX_NODE.${id}`,
    });
  }

  /** As the orchestrator: a user its operator issues with the orchestrator's permissions. */
  asOrchestrator(): Promise<NatsConnection> {
    const { running, dataDir } = this.orchestrator();
    const operator = new NatsOperator(loadOrCreateOperatorKeys(join(dataDir, "credentials")), {
      joinToken: running.joinToken.token,
      jetStreamDiskBytes: 1,
    });
    const key = newNkey("user");
    return this.login({
      authenticator: jwtLogin(operator.issueUser(key.publicKey, ORCHESTRATOR_USER, ORCHESTRATOR_PERMISSIONS), key),
    });
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled(this.open.splice(0).map((nc) => nc.close()));
  }
}
