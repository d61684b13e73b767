import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import bcrypt from "bcryptjs";
import { identityOf, isBcryptHash, type ApiAction, type AuthUser } from "../../config/auth-users.ts";

/** Someone the API knows: the identity recorded in the history and what they may do. */
export interface Principal {
  readonly id: string;
  readonly actions: readonly ApiAction[];
}

export type Authentication = { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly reason: string };

interface PasswordUser {
  readonly principal: Principal;
  /** sha256 of a plain password, or the bcrypt hash. */
  readonly secret: Buffer | string;
}

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/** Digests have one length, so timingSafeEqual never throws and never short-cuts on length. */
const sameDigest = (a: Buffer, b: Buffer): boolean => timingSafeEqual(a, b);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface AuthenticatorOptions {
  /** How long a successful bcrypt verification is remembered. */
  readonly cacheTtlMs?: number;
  readonly cacheSize?: number;
  readonly now?: () => number;
}

/**
 * Checks `Authorization: Basic …` and `Bearer <API key>` against `API.Auth.Users`.
 *
 * Secrets are compared as sha256 digests with timingSafeEqual, and every API key is compared
 * (no early exit), so response time says nothing about how much of a secret was right. bcrypt
 * takes tens of milliseconds by design; a successful verification is remembered for a short
 * time under an HMAC of the presented credentials (keyed per process, so the cache never holds
 * anything that could be brute-forced offline), which keeps repeated CLI calls fast. Failures
 * are never cached.
 */
export class Authenticator {
  private readonly apiKeys: { readonly principal: Principal; readonly digest: Buffer }[] = [];
  private readonly passwords = new Map<string, PasswordUser>();
  /** HMAC of verified bcrypt credentials → until when they count as verified. */
  private readonly verified = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<boolean>>();
  private readonly cacheKey = randomBytes(32);
  private readonly ttlMs: number;
  private readonly cacheSize: number;
  private readonly now: () => number;
  /** bcrypt verifications actually run (not answered from the cache). */
  bcryptVerifications = 0;

  constructor(users: readonly AuthUser[], options: AuthenticatorOptions = {}) {
    this.ttlMs = options.cacheTtlMs ?? 5 * 60_000;
    this.cacheSize = options.cacheSize ?? 1024;
    this.now = options.now ?? Date.now;
    for (const user of users) {
      const principal: Principal = { id: identityOf(user), actions: user.Capabilities.flatMap((c) => c.Actions) };
      if (user.APIKey !== undefined) this.apiKeys.push({ principal, digest: digest(user.APIKey) });
      if (user.Username !== undefined && user.Password !== undefined) {
        const secret = isBcryptHash(user.Password) ? user.Password : digest(user.Password);
        this.passwords.set(user.Username.toLowerCase(), { principal, secret });
      }
    }
  }

  /** `header` is the Authorization header as sent. */
  async authenticate(header: string): Promise<Authentication> {
    const m = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(header);
    const scheme = m?.[1]?.toLowerCase();
    if (!m || (scheme !== "basic" && scheme !== "bearer")) {
      return { ok: false, reason: "unsupported Authorization header: use Basic <base64 user:password> or Bearer <API key>" };
    }
    return scheme === "bearer" ? this.bearer(m[2]!) : this.basic(m[2]!);
  }

  private bearer(key: string): Authentication {
    const presented = digest(key);
    let found: Principal | undefined;
    for (const candidate of this.apiKeys) if (sameDigest(presented, candidate.digest) && found === undefined) found = candidate.principal;
    return found ? { ok: true, principal: found } : { ok: false, reason: "invalid API key" };
  }

  private async basic(encoded: string): Promise<Authentication> {
    const invalid: Authentication = { ok: false, reason: "invalid username or password" };
    if (!BASE64.test(encoded)) return { ok: false, reason: "malformed Basic credentials: expected base64 of user:password" };
    const decoded = Buffer.from(encoded, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return { ok: false, reason: "malformed Basic credentials: expected base64 of user:password" };
    const username = decoded.slice(0, colon).toLowerCase();
    const password = decoded.slice(colon + 1);
    const user = this.passwords.get(username);
    if (user === undefined) return invalid;
    if (typeof user.secret !== "string") return sameDigest(digest(password), user.secret) ? { ok: true, principal: user.principal } : invalid;
    return (await this.bcrypt(username, password, user.secret)) ? { ok: true, principal: user.principal } : invalid;
  }

  private async bcrypt(username: string, password: string, hash: string): Promise<boolean> {
    const key = createHmac("sha256", this.cacheKey).update(`${username}\0${password}`, "utf8").digest("base64");
    const until = this.verified.get(key);
    if (until !== undefined && until > this.now()) return true;
    if (until !== undefined) this.verified.delete(key);
    // Concurrent requests with the same credentials share one verification.
    let pending = this.inFlight.get(key);
    if (pending === undefined) {
      this.bcryptVerifications++;
      pending = bcrypt.compare(password, hash).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    const ok = await pending;
    if (ok && !this.verified.has(key)) {
      if (this.verified.size >= this.cacheSize) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(key, this.now() + this.ttlMs);
    }
    return ok;
  }
}
