import { join } from "node:path";
import { createInbox, type NatsConnection } from "nats";
import { loadOrCreateSecret, readSecret } from "../../security/secret-file.ts";
import {
  JOIN_PERMISSIONS,
  JOIN_USER,
  LEAF_PERMISSIONS,
  LEAF_SYSTEM_PERMISSIONS,
  LEAF_SYSTEM_USER,
  LEAF_USER,
  HUB_ANSWER_PREFIX,
  type NatsPermissions,
} from "../nats-auth/nats-roles.ts";
import { accountJwt, decodeJwt, operatorJwt, userJwt } from "./nats-jwt.ts";
import { jwtLogin } from "./jwt-login.ts";
import { newNkey, nkeyDerivedFrom, nkeyFromSeed, type NatsNkey } from "./nats-nkey.ts";

export class NatsOperatorError extends Error {
  override readonly name = "NatsOperatorError";
}

/**
 * The client logins Shoal issues (orchestrator, nodes, event readers, account updates) are valid
 * only as plain client connections: stolen, one cannot log in as a leaf server (and carry
 * traffic for others under its permissions), nor over websocket or MQTT, which Shoal never
 * enables but an external or later configuration might. Leaf logins are LEAFNODE only. The join
 * login cannot say so: nats-server 2.9 checks a user's connection types from its own JWT, before
 * a scope replaces its permissions, and refuses a scoped user's JWT that claims anything, so a
 * join-token holder may log in as a leaf — with the join permissions and nothing more.
 */
const CLIENT_ONLY = ["STANDARD"] as const;

export const SYSTEM_ACCOUNT_NAME = "SYS";
export const SHOAL_ACCOUNT_NAME = "SHOAL";

/**
 * The Shoal account's identity and the join signer are derived from the join token (HMAC), so a
 * node that holds only the token and the URL can name the account and sign itself a join login.
 * Holding the account's identity key gives nothing else: the operator uses strict signing-key
 * usage, under which nats-server refuses users signed by an account's identity key (only its
 * listed signing keys count) and accounts signed by anything but the operator's signing keys.
 */
const ACCOUNT_LABEL = "shoal-nats-account-v1";
const JOIN_SIGNER_LABEL = "shoal-nats-join-signer-v1";

export const shoalAccountKey = (joinToken: string): NatsNkey => nkeyDerivedFrom("account", joinToken, ACCOUNT_LABEL);

/**
 * The account signing key every holder of the join token derives alike, registered as a *scoped*
 * signer: a user it signs gets exactly the join permissions, whatever its JWT says. The token
 * never travels; only signatures made with keys derived from it do.
 */
export const joinSigner = (joinToken: string): NatsNkey => nkeyDerivedFrom("account", joinToken, JOIN_SIGNER_LABEL);

/** A login as a holder of the join token: a fresh user key, and a JWT for it from the token's scoped signer. */
export function joinLogin(joinToken: string): ReturnType<typeof jwtLogin> {
  const key = newNkey("user");
  const jwt = userJwt(joinSigner(joinToken), key.publicKey, JOIN_USER, undefined, {
    issuerAccount: shoalAccountKey(joinToken).publicKey,
    scoped: true,
  });
  return jwtLogin(jwt, key);
}

/** The keys only the orchestrator holds; generated once under `dir` (0600), like every other secret. */
export interface NatsOperatorKeys {
  readonly operator: NatsNkey;
  /** Signs the accounts (strict usage: the operator's identity key signs only the operator). */
  readonly operatorSigner: NatsNkey;
  readonly systemAccount: NatsNkey;
  /** Signs the system account's users (Shoal's, to push account updates). */
  readonly systemSigner: NatsNkey;
  /** Signs the Shoal account's users: the orchestrator, event readers, nodes. */
  readonly accountSigner: NatsNkey;
}

export function loadOrCreateOperatorKeys(dir: string): NatsOperatorKeys {
  return operatorKeys((file, kind) =>
    nkeyFromSeed(kind, loadOrCreateSecret(join(dir, file), () => newNkey(kind).seed).value),
  );
}

/**
 * The keys loadOrCreateOperatorKeys made, for tools beside the orchestrator: a missing file is an error, never made
 * anew.
 */
export function loadOperatorKeys(dir: string): NatsOperatorKeys {
  return operatorKeys((file, kind) => nkeyFromSeed(kind, readSecret(join(dir, file))));
}

function operatorKeys(
  load: (file: string, kind: "operator" | "account") => ReturnType<typeof nkeyFromSeed>,
): NatsOperatorKeys {
  return {
    operator: load("nats-operator.nk", "operator"),
    operatorSigner: load("nats-operator-signer.nk", "operator"),
    systemAccount: load("nats-system-account.nk", "account"),
    systemSigner: load("nats-system-signer.nk", "account"),
    accountSigner: load("nats-account-signer.nk", "account"),
  };
}

export interface NatsOperatorOptions {
  readonly joinToken: string;
  /** JetStream's disk budget for the Shoal account. */
  readonly jetStreamDiskBytes: number;
  /** User keys already cut off (see revocationsIn), with when. */
  readonly revocations?: Iterable<readonly [string, number]>;
  /** The time (ms since the epoch) JWTs are issued and keys revoked at; the system's by default. */
  readonly now?: () => number;
}

/**
 * Shoal as the NATS operator (decentralized auth): nats-server trusts the operator's JWT, finds
 * the accounts' JWTs in its configuration (`resolver: MEMORY`), and admits any user whose JWT the
 * Shoal account's signing key signed — so admitting a node is signing a JWT, with no configuration
 * change and no reload. Cutting a user off is a revocation in the account's JWT, pushed to the
 * running server through its system account, and written to the configuration for its restarts.
 */
export class NatsOperator {
  private readonly revoked: Map<string, number>;
  private readonly accountKey: NatsNkey;
  /** The operator's and the system account's JWTs never change: signed once. */
  private fixed: { readonly operator: string; readonly system: string } | undefined;
  /** The Shoal account's JWT, until the next revocation. */
  private signedAccount: string | undefined;
  /**
   * The least issued-at (seconds) of the next account JWT: past the one a NATS cluster's resolver holds, which ignores
   * an older update (yet answers that it applied it) whatever this machine's clock says.
   */
  private issueFrom = 0;

  constructor(
    private readonly keys: NatsOperatorKeys,
    private readonly options: NatsOperatorOptions,
  ) {
    this.revoked = new Map(options.revocations ?? []);
    this.accountKey = shoalAccountKey(options.joinToken);
  }

  get account(): string {
    return this.accountKey.publicKey;
  }

  get revocations(): ReadonlyMap<string, number> {
    return this.revoked;
  }

  get systemAccount(): string {
    return this.keys.systemAccount.publicKey;
  }

  /** What goes into nats-server's config instead of accounts and users. */
  serverConfig(): Record<string, unknown> {
    return this.trustedConfig("MEMORY");
  }

  /**
   * The same for the servers of an external NATS cluster (docs/security.md, Shoal as the operator of an external
   * NATS): the NATS-based full resolver, which keeps the account JWTs in `resolverDir` on each server and hands an
   * update one server applies to the others, so a revocation pushed to any server reaches them all. Deleting an
   * account over NATS is refused: nothing of Shoal's asks for it.
   */
  clusterConfig(resolverDir: string): Record<string, unknown> {
    // Issued at the epoch's first second: a resolver keeps the newer of two JWTs, so these servers take it only while
    // they hold none, and a configuration written again later never undoes the revocations pushed meanwhile.
    return this.trustedConfig({ type: "full", dir: resolverDir, allow_delete: false }, this.signAccount(1));
  }

  private trustedConfig(resolver: unknown, account = this.accountJwt()): Record<string, unknown> {
    const { operator, operatorSigner, systemAccount, systemSigner } = this.keys;
    this.fixed ??= {
      operator: operatorJwt(operator, "shoal", systemAccount.publicKey, [operatorSigner.publicKey]),
      system: accountJwt(operatorSigner, systemAccount.publicKey, SYSTEM_ACCOUNT_NAME, {
        signingKeys: [systemSigner.publicKey],
      }),
    };
    return {
      operator: this.fixed.operator,
      system_account: systemAccount.publicKey,
      resolver,
      resolver_preload: {
        [systemAccount.publicKey]: this.fixed.system,
        [this.account]: account,
      },
    };
  }

  /** The Shoal account's JWT as it stands: JetStream, its signers, the revocations. Signed once per change. */
  accountJwt(): string {
    this.signedAccount ??= this.signAccount();
    return this.signedAccount;
  }

  private nowSeconds(): number {
    return Math.floor((this.options.now ?? Date.now)() / 1000);
  }

  private signAccount(iat = Math.max(this.nowSeconds(), this.issueFrom)): string {
    return accountJwt(this.keys.operatorSigner, this.account, SHOAL_ACCOUNT_NAME, {
      jetStreamDiskBytes: this.options.jetStreamDiskBytes,
      revocations: this.revoked,
      signingKeys: [this.keys.accountSigner.publicKey],
      scopedSigners: [{ key: joinSigner(this.options.joinToken).publicKey, role: "join", template: JOIN_PERMISSIONS }],
      iat,
    });
  }

  /**
   * A JWT admitting `userKey` with `permissions`. It is issued after any revocation of the key
   * (nats-server refuses JWTs issued at or before it), so a key cut off and admitted again later
   * gets in with the new JWT while the old ones stay refused.
   */
  issueUser(userKey: string, name: string, permissions: NatsPermissions): string {
    const now = this.nowSeconds();
    const revokedAt = this.revoked.get(userKey);
    return userJwt(this.keys.accountSigner, userKey, name, permissions, {
      issuerAccount: this.account,
      iat: revokedAt === undefined ? now : Math.max(now, revokedAt + 1),
      connectionTypes: CLIENT_ONLY,
    });
  }

  /** A login for the system account, only to push account updates. */
  systemLogin(): ReturnType<typeof jwtLogin> {
    const key = newNkey("user");
    return jwtLogin(
      userJwt(this.keys.systemSigner, key.publicKey, "shoal-account-updates", undefined, {
        issuerAccount: this.keys.systemAccount.publicKey,
        connectionTypes: CLIENT_ONLY,
      }),
      key,
    );
  }

  /**
   * A leaf server's two logins to the hub (docs/operations.md, Leaf nodes): one in the Shoal
   * account carrying its nodes' subjects, one in the system account receiving account updates;
   * each only what that needs (LEAF_PERMISSIONS, LEAF_SYSTEM_PERMISSIONS).
   */
  leafLogins(shoalKey: string, systemKey: string): { readonly shoal: string; readonly system: string } {
    // Only as a leaf connection: as a client on the hub, the Shoal login could speak for any node.
    const leafOnly = { connectionTypes: ["LEAFNODE"] };
    return {
      shoal: userJwt(this.keys.accountSigner, shoalKey, LEAF_USER, LEAF_PERMISSIONS, {
        issuerAccount: this.account,
        ...leafOnly,
      }),
      system: userJwt(this.keys.systemSigner, systemKey, LEAF_SYSTEM_USER, LEAF_SYSTEM_PERMISSIONS, {
        issuerAccount: this.keys.systemAccount.publicKey,
        ...leafOnly,
      }),
    };
  }

  /**
   * Keeps the revocations in `jwt`, this account's JWT as another orchestrator signed it (a NATS cluster's resolver
   * holds it), so the next JWT signed here does not let those keys back in; of two times for one key, the later
   * counts. The next JWT signed here is issued after it, so the resolver takes it. A JWT this operator did not sign
   * adds nothing.
   */
  keepRevocationsIn(jwt: string): void {
    const claims = ownAccountClaims(jwt, this.keys.operatorSigner.publicKey, this.account);
    if (claims === undefined) return;
    if (claims.iat >= this.issueFrom) {
      this.issueFrom = claims.iat + 1;
      this.signedAccount = undefined;
    }
    for (const [key, at] of revocationsFrom(claims)) {
      const known = this.revoked.get(key);
      if (known !== undefined && known >= at) continue;
      this.revoked.set(key, at);
      this.signedAccount = undefined;
    }
  }

  /**
   * Cuts `userKeys` off: their JWTs issued until now no longer count. The account's JWT is
   * signed again once, when next asked for, however many keys are revoked at once.
   */
  revoke(userKeys: Iterable<string>): void {
    const now = this.nowSeconds();
    for (const key of userKeys) this.revoked.set(key, now);
    this.signedAccount = undefined;
  }
}

/**
 * The revocations in a configuration serverConfig() wrote, if its Shoal account JWT is this
 * operator's (signed by `operatorSigner`); otherwise none. What a restarted orchestrator starts from.
 */
export function revocationsIn(configText: string, operatorSigner: string, account: string): Map<string, number> {
  const jwt = preloadedAccountJwt(configText, account);
  return jwt === undefined ? new Map() : revocationsOf(jwt, operatorSigner, account);
}

/** The revocations in an account JWT, if it is `account`'s and `operatorSigner` signed it; otherwise none. */
export function revocationsOf(jwt: string, operatorSigner: string, account: string): Map<string, number> {
  const claims = ownAccountClaims(jwt, operatorSigner, account);
  return claims === undefined ? new Map() : revocationsFrom(claims);
}

type JwtClaims = ReturnType<typeof decodeJwt>;

/** `jwt`'s claims if it is `account`'s JWT and `operatorSigner` signed it; otherwise undefined. */
function ownAccountClaims(jwt: string, operatorSigner: string, account: string): JwtClaims | undefined {
  try {
    const claims = decodeJwt(jwt);
    return claims.iss === operatorSigner && claims.sub === account ? claims : undefined;
  } catch {
    return undefined;
  }
}

function revocationsFrom(claims: JwtClaims): Map<string, number> {
  const revocations = (claims.nats.revocations ?? {}) as Record<string, unknown>;
  return new Map(Object.entries(revocations).filter((e): e is [string, number] => typeof e[1] === "number"));
}

/**
 * The JWT a configuration serverConfig() wrote preloads for `account`; undefined if none (or not such a configuration).
 */
export function preloadedAccountJwt(configText: string, account: string): string | undefined {
  let preload: Record<string, unknown> | undefined;
  try {
    preload = (JSON.parse(configText) as { resolver_preload?: Record<string, unknown> }).resolver_preload;
  } catch {
    return undefined;
  }
  const jwt = preload !== undefined && Object.hasOwn(preload, account) ? preload[account] : undefined;
  return typeof jwt === "string" ? jwt : undefined;
}

export interface PushOptions {
  /** The server whose answer counts (its id): by default the one `system` is connected to. */
  readonly server?: string;
  readonly timeoutMs?: number;
}

/**
 * Hands an account's new JWT to the running servers over the system account: the one `system`
 * is connected to and every leaf server connected to it. Resolves once the server named by
 * `options.server` (the hub by default) says it applied it (it then drops the connections of
 * revoked users itself). Leaf servers apply it too but cannot answer (HUB_ANSWER_PREFIX); which
 * of them holds it is LeafAccountSync's business.
 */
export function pushAccountJwt(
  system: NatsConnection,
  account: string,
  jwt: string,
  options: PushOptions = {},
): Promise<void> {
  const server = options.server ?? system.info?.server_id;
  const timeoutMs = options.timeoutMs ?? 5000;
  // The hub's answer space: leaf servers get no interest in it, so they neither answer nor can forge the hub's answer.
  const inbox = createInbox(HUB_ANSWER_PREFIX);
  return new Promise<void>((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      sub.unsubscribe();
      if (error) reject(error);
      else resolve();
    };
    // Throws at once on a closed connection, before any timer is set. settle() runs only later (a reply, the timer, a
    // failed publish).
    const sub = system.subscribe(inbox, {
      callback: (err, msg) => {
        if (err) return settle(new NatsOperatorError(`nats-server did not apply the account update: ${err.message}`));
        let body: {
          data?: { code?: number; message?: string };
          error?: { code?: number; description?: string };
          server?: { id?: string };
        };
        try {
          body = JSON.parse(new TextDecoder().decode(msg.data)) as typeof body;
        } catch {
          return;
        }
        if (server !== undefined && body.server?.id !== server) return;
        if (body.data?.code === 200) settle();
        else
          settle(
            new NatsOperatorError(
              `nats-server did not apply the account update: ${body.error?.description ?? body.data?.message ?? "no answer"}`,
            ),
          );
      },
    });
    const timer = setTimeout(
      () =>
        settle(
          new NatsOperatorError(`nats-server ${server ?? ""} did not answer the account update within ${timeoutMs} ms`),
        ),
      timeoutMs,
    );
    try {
      system.publish(`$SYS.REQ.ACCOUNT.${account}.CLAIMS.UPDATE`, new TextEncoder().encode(jwt), { reply: inbox });
    } catch (e) {
      settle(e as Error);
    }
  });
}
