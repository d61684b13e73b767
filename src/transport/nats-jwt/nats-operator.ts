import { join } from "node:path";
import type { NatsConnection } from "nats";
import { loadOrCreateSecret } from "../../security/secret-file.ts";
import { JOIN_PERMISSIONS, type NatsPermissions } from "../nats-auth/nats-roles.ts";
import { accountJwt, operatorJwt, userJwt } from "./nats-jwt.ts";
import { jwtLogin } from "./jwt-login.ts";
import { newNkey, nkeyDerivedFrom, nkeyFromSeed, type NatsNkey } from "./nats-nkey.ts";

export class NatsOperatorError extends Error {
  override readonly name = "NatsOperatorError";
}

/** nats-server's own account for its system events; Shoal uses it only to push account updates. */
export const SYSTEM_ACCOUNT_NAME = "SYS";
export const SHOAL_ACCOUNT_NAME = "SHOAL";
const JOIN_SIGNER_LABEL = "shoal-nats-join-signer-v1";

/**
 * The account signing key that every holder of the join token derives alike. It is registered as
 * a *scoped* signer: a user it signs gets exactly the join permissions, whatever its JWT says, so
 * a token holder can let itself in to ask to join and do nothing else; the token never travels.
 */
export const joinSigner = (joinToken: string): NatsNkey => nkeyDerivedFrom("account", joinToken, JOIN_SIGNER_LABEL);

/**
 * A login as a holder of the join token: a fresh user key, and a JWT for it signed with the
 * token's scoped signer (`account` is the Shoal account's public key, which a node learns from
 * the operator's configuration or the server: it is no secret).
 */
export function joinLogin(joinToken: string, account: string): ReturnType<typeof jwtLogin> {
  const key = newNkey("user");
  return jwtLogin(userJwt(joinSigner(joinToken), key.publicKey, "shoal-join", undefined, { issuerAccount: account }), key);
}

export interface NatsOperatorKeys {
  readonly operator: NatsNkey;
  readonly systemAccount: NatsNkey;
  readonly account: NatsNkey;
}

/** The operator's, system account's and Shoal account's keys: generated once under `dir` (0600), like every other secret. */
export function loadOrCreateOperatorKeys(dir: string): NatsOperatorKeys {
  const load = (file: string, kind: "operator" | "account") => nkeyFromSeed(kind, loadOrCreateSecret(join(dir, file), () => newNkey(kind).seed).value);
  return {
    operator: load("nats-operator.nk", "operator"),
    systemAccount: load("nats-system-account.nk", "account"),
    account: load("nats-account.nk", "account"),
  };
}

export interface NatsOperatorOptions {
  readonly joinToken: string;
  /** JetStream's disk budget for the Shoal account. */
  readonly jetStreamDiskBytes: number;
  /** User keys already cut off (from the previous configuration), with when. */
  readonly revocations?: Iterable<readonly [string, number]>;
}

/**
 * Shoal as the NATS operator (decentralized auth): nats-server trusts the operator's JWT, finds
 * the accounts' JWTs in its configuration (`resolver: MEMORY`), and admits any user whose JWT the
 * Shoal account signed — so admitting a node is signing a JWT, with no configuration change and
 * no reload. Cutting a user off is a revocation in the account's JWT, pushed to the running
 * server through its system account.
 */
export class NatsOperator {
  private readonly revoked: Map<string, number>;

  constructor(
    private readonly keys: NatsOperatorKeys,
    private readonly options: NatsOperatorOptions,
  ) {
    this.revoked = new Map(options.revocations ?? []);
  }

  get account(): string {
    return this.keys.account.publicKey;
  }

  get revocations(): ReadonlyMap<string, number> {
    return this.revoked;
  }

  /** What goes into nats-server's config instead of accounts and users. */
  serverConfig(): Record<string, unknown> {
    const { operator, systemAccount } = this.keys;
    return {
      operator: operatorJwt(operator, "shoal", systemAccount.publicKey),
      system_account: systemAccount.publicKey,
      resolver: "MEMORY",
      resolver_preload: {
        [systemAccount.publicKey]: accountJwt(operator, systemAccount.publicKey, SYSTEM_ACCOUNT_NAME),
        [this.account]: this.accountJwt(),
      },
    };
  }

  /** The Shoal account's JWT as it stands: JetStream, the join token's scoped signer, the revocations. */
  accountJwt(): string {
    return accountJwt(this.keys.operator, this.account, SHOAL_ACCOUNT_NAME, {
      jetStreamDiskBytes: this.options.jetStreamDiskBytes,
      revocations: this.revoked,
      scopedSigners: [{ key: joinSigner(this.options.joinToken).publicKey, role: "join", template: JOIN_PERMISSIONS }],
    });
  }

  /**
   * A JWT admitting `userKey` with `permissions`. Its issue time is after any revocation of the
   * key (nats-server refuses JWTs issued at or before it), so a key cut off and joined again later
   * is let in again.
   */
  issueUser(userKey: string, name: string, permissions: NatsPermissions): string {
    const now = Math.floor(Date.now() / 1000);
    const revokedAt = this.revoked.get(userKey);
    return userJwt(this.keys.account, userKey, name, permissions, { iat: revokedAt === undefined ? now : Math.max(now, revokedAt + 1) });
  }

  /** A login for the system account: only to push account updates. */
  systemLogin(): ReturnType<typeof jwtLogin> {
    const key = newNkey("user");
    return jwtLogin(userJwt(this.keys.systemAccount, key.publicKey, "shoal-account-updates", undefined), key);
  }

  /** Cuts `userKey` off: JWTs issued for it until now no longer count. Returns the new account JWT. */
  revoke(userKey: string): string {
    this.revoked.set(userKey, Math.floor(Date.now() / 1000));
    return this.accountJwt();
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
