import type { NatsConnection } from "nats";
import type { Logger } from "pino";
import { nodePermissions } from "../nats-auth/nats-roles.ts";
import { lookupAccountJwt } from "./lookup-account-jwt.ts";
import { NatsOperatorError, pushAccountJwt, type NatsOperator } from "./nats-operator.ts";

export class NatsJwtGateError extends Error {
  override readonly name = "NatsJwtGateError";
}

/** Where revocations go: the config the server reads when it (re)starts, and the running server. */
export interface RevocationTarget {
  /** Writes the server's configuration as the operator now stands (revocations included). */
  writeConfig(): void;
  /** The system account's connection, once the server runs. */
  readonly system: NatsConnection | undefined;
  /**
   * The servers are a NATS cluster's, whose resolver other orchestrators push to as well (Shoal as the operator of an
   * external NATS): each push first reads the account JWT the resolver holds, keeps its revocations (a leaf login
   * another orchestrator revoked is no event this one follows) and is issued after it (the resolver ignores an older
   * JWT, a clock behind the others' included).
   */
  readonly sharedResolver?: boolean;
}

/**
 * Which node keys the orchestrator's nats-server (operator mode) lets in. Admitting a key is an
 * entry in memory: the node gets a user JWT for it with its join reply, and nothing on the server
 * changes. Cutting a key off is a revocation in the account JWT, written to the config (for the
 * server's restarts) and pushed to the running server, which drops the key's connections; a call
 * resolves once the server has applied it.
 */
export class NatsJwtGate {
  private readonly nodes = new Map<string, string>();
  /** The running server may not hold the latest account JWT: a push failed. */
  private behind = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly operator: NatsOperator,
    private readonly target: RevocationTarget,
    private readonly logger: Logger,
  ) {}

  get boundNodes(): number {
    return this.nodes.size;
  }

  /** A user JWT for `nodeId`'s key with the node's permissions; undefined unless that key is the node's live one. */
  userJwtFor(nodeId: string, publicKey: string): string | undefined {
    if (this.nodes.get(nodeId) !== publicKey) return undefined;
    return this.operator.issueUser(publicKey, nodeId, nodePermissions(nodeId));
  }

  /** Lets `publicKey` in as `nodeId`, or (undefined) nobody; a key that was in and is no longer is revoked. */
  apply(nodeId: string, publicKey: string | undefined): Promise<void> {
    const before = this.nodes.get(nodeId);
    if (before === publicKey) return this.catchUp();
    if (publicKey === undefined) this.nodes.delete(nodeId);
    else this.nodes.set(nodeId, publicKey);
    return before === undefined ? this.catchUp() : this.revoke([before]);
  }

  /** Every live binding at once (after recovery from the store). */
  replaceAll(bindings: Iterable<readonly [string, string]>): Promise<void> {
    const next = new Map(bindings);
    const gone = [...this.nodes].filter(([nodeId, key]) => next.get(nodeId) !== key).map(([, key]) => key);
    this.nodes.clear();
    for (const [nodeId, key] of next) this.nodes.set(nodeId, key);
    return gone.length > 0 ? this.revoke(gone) : this.catchUp();
  }

  /**
   * Revokes keys the store shows revoked that the server may not know of (a crash between the
   * event and the push); keys already revoked keep their entry, live keys are never revoked.
   */
  revokeStale(keys: Iterable<string>): Promise<void> {
    const live = new Set(this.nodes.values());
    const stale = [...keys].filter((key) => !live.has(key) && !this.operator.revocations.has(key));
    return stale.length > 0 ? this.revoke(stale) : this.catchUp();
  }

  /**
   * Cuts leaf servers' Shoal-account logins off (`shoal leaf revoke`): revoked in the account JWT
   * like node keys, so the hub drops the leaf and refuses it from then on, and the revocation is
   * kept in the server's configuration across restarts. A node's live key is refused here: a node
   * is cut off by rejecting or deleting it, which its history records.
   */
  revokeLeafLogins(keys: readonly string[]): Promise<void> {
    const live = new Set(this.nodes.values());
    const node = keys.find((key) => live.has(key));
    if (node !== undefined)
      return Promise.reject(new NatsJwtGateError(`${node} is a node's key: reject or delete the node instead`));
    const fresh = keys.filter((key) => !this.operator.revocations.has(key));
    if (fresh.length === 0) return this.catchUp();
    this.logger.info({ keys: fresh }, "revoking leaf server logins");
    return this.revoke(fresh);
  }

  /** After an outage: if a push failed, push the account JWT as it stands now. */
  catchUp(): Promise<void> {
    return this.behind ? this.push() : this.running;
  }

  /** Sends the account JWT as it stands to the hub and every connected leaf (after the system login reconnected). */
  republish(): Promise<void> {
    return this.push();
  }

  private revoke(keys: readonly string[]): Promise<void> {
    this.operator.revoke(keys);
    this.logger.info({ keys: keys.length, revocations: this.operator.revocations.size }, "revoking node keys");
    this.target.writeConfig();
    return this.push();
  }

  /** One push at a time, each with the account JWT as it stands when it is sent. */
  private push(): Promise<void> {
    this.behind = true;
    return this.enqueue(async (system) => {
      try {
        if (this.target.sharedResolver) await this.keepResolverRevocations(system);
        await pushAccountJwt(system, this.operator.account, this.operator.accountJwt());
        this.behind = false;
      } catch (e) {
        this.behind = true;
        throw e;
      }
    });
  }

  private async keepResolverRevocations(system: NatsConnection): Promise<void> {
    const held = await lookupAccountJwt(system, this.operator);
    // Pushing without it could let keys revoked elsewhere back in: the push waits for the next catch-up instead.
    if (held === undefined)
      throw new NatsOperatorError("the NATS servers did not say which account JWT they hold: nothing pushed");
    this.operator.keepRevocationsIn(held);
  }

  /**
   * Runs `send` after every push before it, so servers get account JWTs in the order they were
   * signed (a leaf applies whatever it is handed, newer or not). Leaf servers that (re)connect are
   * handed the JWT by LeafAccountSync, beside this queue and on the same connection.
   */
  private enqueue(send: (system: NatsConnection) => Promise<void>): Promise<void> {
    const next = this.running
      .catch(() => undefined)
      .then(async () => {
        const system = this.target.system;
        if (!system) return; // the server is not started yet: it reads the config written above
        await send(system);
      });
    this.running = next;
    return next;
  }
}
