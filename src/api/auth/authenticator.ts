import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import bcrypt from "bcryptjs";
import { identityOf, isBcryptHash, type ApiAction, type AuthUser } from "../../config/auth-users.ts";
import { unavailable } from "../../errors/shoal-error.ts";

/** Someone the API knows: the identity recorded in the history and what they may do. */
export interface Principal {
  readonly id: string;
  readonly actions: readonly ApiAction[];
}

export type Authentication =
  { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly reason: string };

interface PasswordUser {
  readonly principal: Principal;
  /** sha256 of a plain password, or the bcrypt hash. */
  readonly secret: Buffer | string;
}

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/** Digests have one length, so timingSafeEqual never throws and never short-cuts on length. */
const sameDigest = (a: Buffer, b: Buffer): boolean => timingSafeEqual(a, b);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A well-formed bcrypt hash of no password anyone knows: checking a password against it costs
 * what checking a real one of that cost does (bcryptjs hashes with its salt, then compares).
 */
const dummyBcryptHash = (cost: number): string =>
  `$2b$${String(cost).padStart(2, "0")}$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy`;

/** What one bcrypt check past the cap is told: come back in a second. */
const BCRYPT_BUSY_RETRY_AFTER_SECONDS = 1;

export interface AuthenticatorOptions {
  /** How long a successful bcrypt verification is remembered. */
  readonly cacheTtlMs?: number;
  readonly cacheSize?: number;
  readonly now?: () => number;
  /**
   * bcrypt verifications (not answered from the cache) running at once; more are refused with
   * 503 + Retry-After. bcryptjs runs on the event loop: unbounded wrong-password requests would
   * otherwise starve everything else on it, heartbeats included.
   */
  readonly maxConcurrentBcrypt?: number;
}

/**
 * Checks `Authorization: Basic …` and `Bearer <API key>` against `API.Auth.Users`.
 *
 * Secrets are compared as sha256 digests with timingSafeEqual, and every API key is compared
 * (no early exit), so response time says nothing about how much of a secret was right. bcrypt
 * takes tens of milliseconds by design; a successful verification is remembered for a short
 * time under an HMAC of the presented credentials (keyed per process, so the cache never holds
 * anything that could be brute-forced offline), which keeps repeated CLI calls fast. Failures
 * are never cached. An unknown username pays for bcrypt too (against a dummy hash of the highest
 * configured cost), so response time does not tell which usernames exist.
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
  private readonly maxConcurrentBcrypt: number;
  private bcryptRunning = 0;
  /** The bcrypt cost an unknown username pays: the highest configured; undefined without bcrypt users. */
  readonly unknownUserCost: number | undefined;
  private readonly unknownUserHash: string | undefined;
  /** bcrypt verifications actually run (not answered from the cache), an unknown user's included. */
  bcryptVerifications = 0;

  constructor(users: readonly AuthUser[], options: AuthenticatorOptions = {}) {
    this.ttlMs = options.cacheTtlMs ?? 5 * 60_000;
    this.cacheSize = options.cacheSize ?? 1024;
    this.now = options.now ?? Date.now;
    this.maxConcurrentBcrypt = options.maxConcurrentBcrypt ?? 2;
    let highestCost: number | undefined;
    for (const user of users) {
      const principal: Principal = { id: identityOf(user), actions: user.Capabilities.flatMap((c) => c.Actions) };
      if (user.APIKey !== undefined) this.apiKeys.push({ principal, digest: digest(user.APIKey) });
      if (user.Username !== undefined && user.Password !== undefined) {
        const secret = isBcryptHash(user.Password) ? user.Password : digest(user.Password);
        this.passwords.set(user.Username.toLowerCase(), { principal, secret });
        if (typeof secret === "string") highestCost = Math.max(highestCost ?? 0, bcrypt.getRounds(secret));
      }
    }
    this.unknownUserCost = highestCost;
    this.unknownUserHash = highestCost === undefined ? undefined : dummyBcryptHash(highestCost);
  }

  /** `header` is the Authorization header as sent. */
  async authenticate(header: string): Promise<Authentication> {
    // A scheme alone is what a script sends when the key it read is empty (a wrong path to the key file).
    const bare = /^\s*(basic|bearer)\s*$/i.exec(header)?.[1];
    if (bare !== undefined)
      return { ok: false, reason: `Authorization header ${JSON.stringify(bare)} has no credential after it` };
    const m = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(header);
    const scheme = m?.[1]?.toLowerCase();
    if (!m || (scheme !== "basic" && scheme !== "bearer")) {
      return {
        ok: false,
        reason: "unsupported Authorization header: use Basic <base64 user:password> or Bearer <API key>",
      };
    }
    return scheme === "bearer" ? this.bearer(m[2]!) : this.basic(m[2]!);
  }

  private bearer(key: string): Authentication {
    const presented = digest(key);
    let found: Principal | undefined;
    for (const candidate of this.apiKeys)
      if (sameDigest(presented, candidate.digest) && found === undefined) found = candidate.principal;
    return found ? { ok: true, principal: found } : { ok: false, reason: "invalid API key" };
  }

  private async basic(encoded: string): Promise<Authentication> {
    const invalid: Authentication = { ok: false, reason: "invalid username or password" };
    if (!BASE64.test(encoded))
      return { ok: false, reason: "malformed Basic credentials: expected base64 of user:password" };
    const decoded = Buffer.from(encoded, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return { ok: false, reason: "malformed Basic credentials: expected base64 of user:password" };
    const username = decoded.slice(0, colon).toLowerCase();
    const password = decoded.slice(colon + 1);
    const user = this.passwords.get(username);
    if (user === undefined) {
      if (this.unknownUserHash !== undefined) await this.bcrypt(username, password, this.unknownUserHash);
      return invalid;
    }
    if (typeof user.secret !== "string")
      return sameDigest(digest(password), user.secret) ? { ok: true, principal: user.principal } : invalid;
    return (await this.bcrypt(username, password, user.secret)) ? { ok: true, principal: user.principal } : invalid;
  }

  /** Throws Unavailable (503, Retry-After: 1) when maxConcurrentBcrypt verifications are already running. */
  private async bcrypt(username: string, password: string, hash: string): Promise<boolean> {
    const key = createHmac("sha256", this.cacheKey).update(`${username}\0${password}`, "utf8").digest("base64");
    const until = this.verified.get(key);
    if (until !== undefined && until > this.now()) return true;
    if (until !== undefined) this.verified.delete(key);
    // Concurrent requests with the same credentials share one verification.
    let pending = this.inFlight.get(key);
    if (pending === undefined) {
      if (this.bcryptRunning >= this.maxConcurrentBcrypt) {
        throw unavailable(
          "too many password checks in progress; retry shortly, or use an API key",
          BCRYPT_BUSY_RETRY_AFTER_SECONDS,
        );
      }
      this.bcryptVerifications++;
      this.bcryptRunning++;
      pending = bcrypt.compare(password, hash).finally(() => {
        this.bcryptRunning--;
        this.inFlight.delete(key);
      });
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
