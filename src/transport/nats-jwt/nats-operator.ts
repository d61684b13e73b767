import { join } from "node:path";
import type { NatsConnection } from "nats";
import { loadOrCreateSecret } from "../../security/secret-file.ts";
import { JOIN_PERMISSIONS, JOIN_USER, type NatsPermissions } from "../nats-auth/nats-roles.ts";
import { accountJwt, decodeJwt, operatorJwt, userJwt } from "./nats-jwt.ts";
import { jwtLogin } from "./jwt-login.ts";
import { newNkey, nkeyDerivedFrom, nkeyFromSeed, type NatsNkey } from "./nats-nkey.ts";

export class NatsOperatorError extends Error {
  override readonly name = "NatsOperatorError";
}

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
  const jwt = userJwt(joinSigner(joinToken), key.publicKey, JOIN_USER, undefined, { issuerAccount: shoalAccountKey(joinToken).publicKey, scoped: true });
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
  const load = (file: string, kind: "operator" | "account") => nkeyFromSeed(kind, loadOrCreateSecret(join(dir, file), () => newNkey(kind).seed).value);
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

  /** What goes into nats-server's config instead of accounts and users. */
  serverConfig(): Record<string, unknown> {
    const { operator, operatorSigner, systemAccount, systemSigner } = this.keys;
    return {
      operator: operatorJwt(operator, "shoal", systemAccount.publicKey, [operatorSigner.publicKey]),
      system_account: systemAccount.publicKey,
      resolver: "MEMORY",
      resolver_preload: {
        [systemAccount.publicKey]: accountJwt(operatorSigner, systemAccount.publicKey, SYSTEM_ACCOUNT_NAME, { signingKeys: [systemSigner.publicKey] }),
        [this.account]: this.accountJwt(),
      },
    };
  }

  /** The Shoal account's JWT as it stands: JetStream, its signers, the revocations. */
  accountJwt(): string {
    return accountJwt(this.keys.operatorSigner, this.account, SHOAL_ACCOUNT_NAME, {
      jetStreamDiskBytes: this.options.jetStreamDiskBytes,
      revocations: this.revoked,
      signingKeys: [this.keys.accountSigner.publicKey],
      scopedSigners: [{ key: joinSigner(this.options.joinToken).publicKey, role: "join", template: JOIN_PERMISSIONS }],
    });
  }

  /**
   * A JWT admitting `userKey` with `permissions`. It is issued after any revocation of the key
   * (nats-server refuses JWTs issued at or before it), so a key cut off and admitted again later
   * gets in with the new JWT while the old ones stay refused.
   */
  issueUser(userKey: string, name: string, permissions: NatsPermissions): string {
    const now = Math.floor(Date.now() / 1000);
    const revokedAt = this.revoked.get(userKey);
    return userJwt(this.keys.accountSigner, userKey, name, permissions, {
      issuerAccount: this.account,
      iat: revokedAt === undefined ? now : Math.max(now, revokedAt + 1),
    });
  }

  /** A login for the system account, only to push account updates. */
  systemLogin(): ReturnType<typeof jwtLogin> {
    const key = newNkey("user");
    return jwtLogin(userJwt(this.keys.systemSigner, key.publicKey, "shoal-account-updates", undefined, { issuerAccount: this.keys.systemAccount.publicKey }), key);
  }

  /** Cuts `userKey` off: its JWTs issued until now no longer count. Returns the account's new JWT. */
  revoke(userKey: string): string {
    this.revoked.set(userKey, Math.floor(Date.now() / 1000));
    return this.accountJwt();
  }
}

/**
 * The revocations in a configuration serverConfig() wrote, if its Shoal account JWT is this
 * operator's (signed by `operatorSigner`); otherwise none. What a restarted orchestrator starts from.
 */
export function revocationsIn(configText: string, operatorSigner: string, account: string): Map<string, number> {
  try {
    const config = JSON.parse(configText) as { resolver_preload?: Record<string, string> };
    const jwt = config.resolver_preload?.[account];
    if (jwt === undefined) return new Map();
    const claims = decodeJwt(jwt);
    if (claims.iss !== operatorSigner || claims.sub !== account) return new Map();
    const revocations = (claims.nats.revocations ?? {}) as Record<string, unknown>;
    return new Map(Object.entries(revocations).filter((e): e is [string, number] => typeof e[1] === "number"));
  } catch {
    return new Map();
  }
}

/**
 * Hands the running server an account's new JWT over its system account; resolves once the
 * server says it applied it (it then drops the connections of revoked users itself).
 */
export async function pushAccountJwt(system: NatsConnection, account: string, jwt: string): Promise<void> {
  const reply = await system.request(`$SYS.REQ.ACCOUNT.${account}.CLAIMS.UPDATE`, new TextEncoder().encode(jwt), { timeout: 5000 });
  const body = JSON.parse(new TextDecoder().decode(reply.data)) as { data?: { code?: number; message?: string }; error?: { code?: number; description?: string } };
  if (body.data?.code !== 200) {
    throw new NatsOperatorError(`nats-server did not apply the account update: ${body.error?.description ?? body.data?.message ?? "no answer"}`);
  }
}
