import { createHash, verify } from "node:crypto";
import { ed25519PublicKey } from "../nkey-signature.ts";
import { base32 } from "nkeys.js/lib/base32.js";
import { Codec } from "nkeys.js/lib/codec.js";
import { Prefix } from "nkeys.js/lib/nkeys.js";
import type { NatsPermissions } from "../nats-auth/nats-roles.ts";
import type { NatsNkey } from "./nats-nkey.ts";

/**
 * NATS JWTs (nats-io/jwt v2, what nats-server 2.9 reads): `header.claims.signature`, each part
 * base64url without padding; the header is always {"typ":"JWT","alg":"ed25519-nkey"}; the
 * signature is the issuer nkey's ed25519 signature of `header.claims`; `jti` is a digest of the
 * standard claims (nats-server does not check it, it only names the token).
 */
const HEADER = base64url(JSON.stringify({ typ: "JWT", alg: "ed25519-nkey" }));

export class NatsJwtError extends Error {
  override readonly name = "NatsJwtError";
}

interface StandardClaims {
  readonly iss: string;
  readonly sub: string;
  readonly name: string;
  readonly iat: number;
  readonly exp?: number;
}

function base64url(text: string | Uint8Array): string {
  return Buffer.from(text).toString("base64url");
}

/** Signs `nats` as a JWT about `subject` issued by `issuer`. */
export function encodeJwt(
  issuer: NatsNkey,
  subject: string,
  name: string,
  nats: Record<string, unknown>,
  options: { iat?: number; exp?: number } = {},
): string {
  const standard: StandardClaims = {
    iss: issuer.publicKey,
    sub: subject,
    name,
    iat: options.iat ?? Math.floor(Date.now() / 1000),
    ...(options.exp === undefined ? {} : { exp: options.exp }),
  };
  const jti = new TextDecoder().decode(
    base32.encode(createHash("sha512-256").update(JSON.stringify(standard)).digest()),
  );
  const payload = base64url(JSON.stringify({ jti, ...standard, nats }));
  const signed = `${HEADER}.${payload}`;
  return `${signed}.${base64url(issuer.sign(new TextEncoder().encode(signed)))}`;
}

/** The claims of a JWT whose signature its own `iss` made; throws NatsJwtError otherwise. */
export function decodeJwt(
  jwt: string,
): StandardClaims & { readonly jti: string; readonly nats: Record<string, unknown> } {
  const parts = jwt.split(".");
  if (parts.length !== 3 || parts[0] !== HEADER) throw new NatsJwtError("not a NATS JWT");
  const claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as StandardClaims & {
    jti: string;
    nats: Record<string, unknown>;
  };
  let valid = false;
  try {
    const raw = rawPublicKey(claims.iss);
    valid = verify(
      null,
      new TextEncoder().encode(`${parts[0]}.${parts[1]}`),
      ed25519PublicKey(raw),
      Buffer.from(parts[2]!, "base64url"),
    );
  } catch {
    valid = false;
  }
  if (!valid) throw new NatsJwtError("the JWT's signature is not its issuer's");
  return claims;
}

function rawPublicKey(publicKey: string): Uint8Array {
  const prefix = { O: Prefix.Operator, A: Prefix.Account, U: Prefix.User }[publicKey[0] ?? ""];
  if (prefix === undefined) throw new NatsJwtError(`not an operator, account or user key: ${publicKey}`);
  return Codec.decode(prefix, new TextEncoder().encode(publicKey));
}

/** nats-server's config permissions in a JWT's shape (`pub`/`sub` instead of `publish`/`subscribe`). */
export function jwtPermissions(permissions: NatsPermissions): {
  pub: { allow?: string[]; deny?: string[] };
  sub: { allow?: string[]; deny?: string[] };
} {
  const side = (p: NatsPermissions["publish"]) => ({
    ...(p?.allow ? { allow: [...p.allow] } : {}),
    ...(p?.deny ? { deny: [...p.deny] } : {}),
  });
  return { pub: side(permissions.publish), sub: side(permissions.subscribe) };
}

const UNLIMITED = { subs: -1, data: -1, payload: -1 };

/**
 * The operator: trusts the system account, and with `signingKeys` set only they may sign
 * accounts and (strict usage) no identity key may sign users — only an account's signing keys.
 */
export function operatorJwt(
  operator: NatsNkey,
  name: string,
  systemAccount: string,
  signingKeys: readonly string[] = [],
): string {
  return encodeJwt(operator, operator.publicKey, name, {
    type: "operator",
    version: 2,
    system_account: systemAccount,
    ...(signingKeys.length > 0 ? { signing_keys: [...signingKeys], strict_signing_key_usage: true } : {}),
  });
}

export interface AccountOptions {
  /** JetStream for the account: its disk budget in bytes (undefined: none). */
  readonly jetStreamDiskBytes?: number;
  /** User keys cut off, with the time (seconds) at or before which their JWTs no longer count. */
  readonly revocations?: ReadonlyMap<string, number>;
  /** Keys that sign the account's users, with the permissions in each user's JWT. */
  readonly signingKeys?: readonly string[];
  /** Signing keys whose users get exactly `template`'s permissions, whatever their JWT says. */
  readonly scopedSigners?: readonly {
    readonly key: string;
    readonly role: string;
    readonly template: NatsPermissions;
  }[];
  readonly iat?: number;
}

/** An account, issued by the operator (or one of its signing keys). */
export function accountJwt(issuer: NatsNkey, account: string, name: string, options: AccountOptions = {}): string {
  const jetStream =
    options.jetStreamDiskBytes === undefined
      ? {}
      : {
          mem_storage: 64 * 1024 * 1024,
          disk_storage: options.jetStreamDiskBytes,
          streams: -1,
          consumer: -1,
          max_ack_pending: -1,
          max_bytes_required: false,
        };
  const signingKeys = [
    ...(options.signingKeys ?? []),
    ...(options.scopedSigners ?? []).map((s) => ({
      kind: "user_scope",
      key: s.key,
      role: s.role,
      template: { ...jwtPermissions(s.template), ...UNLIMITED },
    })),
  ];
  return encodeJwt(
    issuer,
    account,
    name,
    {
      type: "account",
      version: 2,
      limits: { ...UNLIMITED, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1, ...jetStream },
      default_permissions: { pub: {}, sub: {} },
      ...(options.revocations && options.revocations.size > 0
        ? { revocations: Object.fromEntries(options.revocations) }
        : {}),
      ...(signingKeys.length > 0 ? { signing_keys: signingKeys } : {}),
    },
    options.iat === undefined ? {} : { iat: options.iat },
  );
}

/** An account JWT's JetStream disk limit in bytes; undefined when it gives the account no JetStream. */
export function jetStreamDiskOf(account: string): number | undefined {
  const limits = decodeJwt(account).nats.limits as { disk_storage?: number } | undefined;
  return limits?.disk_storage;
}

export interface UserOptions {
  /** The account, when `signer` is one of its signing keys rather than its identity. */
  readonly issuerAccount?: string;
  /** `signer` is a scoped signer: its template decides, and the JWT carries no permissions or limits. */
  readonly scoped?: boolean;
  /** Only these kinds of connection may log in with it (nats-server's names: STANDARD, LEAFNODE, …); default any. */
  readonly connectionTypes?: readonly string[];
  readonly iat?: number;
  readonly exp?: number;
}

/**
 * A user, with `permissions` in its JWT (none: all) — or, signed by a scoped signer, with the
 * scope's template (nats-server 2.9 replaces whatever such a JWT names; later ones refuse it).
 */
export function userJwt(
  signer: NatsNkey,
  user: string,
  name: string,
  permissions: NatsPermissions | undefined,
  options: UserOptions = {},
): string {
  return encodeJwt(
    signer,
    user,
    name,
    {
      type: "user",
      version: 2,
      // Without limits a user may hold no subscription and send no payload.
      ...(options.scoped ? {} : { ...(permissions ? jwtPermissions(permissions) : {}), ...UNLIMITED }),
      ...(options.connectionTypes ? { allowed_connection_types: [...options.connectionTypes] } : {}),
      ...(options.issuerAccount ? { issuer_account: options.issuerAccount } : {}),
    },
    {
      ...(options.iat === undefined ? {} : { iat: options.iat }),
      ...(options.exp === undefined ? {} : { exp: options.exp }),
    },
  );
}
