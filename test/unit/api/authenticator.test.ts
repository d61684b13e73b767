import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { Authenticator } from "../../../src/api/auth/authenticator.ts";
import type { AuthUser } from "../../../src/config/auth-users.ts";
import { ManualClock } from "../../support/manual-clock.ts";

const KEY = "ci-key-0123456789abcdef";
const USERS: AuthUser[] = [
  {
    Alias: "ops",
    Username: "Alice",
    Password: "plain password",
    Capabilities: [{ Actions: ["read:node", "write:node"] }],
  },
  {
    Username: "bob",
    Password: bcrypt.hashSync("bcrypt password", 4),
    Capabilities: [{ Actions: ["read:*"] }, { Actions: ["write:node"] }],
  },
  { Alias: "ci", APIKey: KEY, Capabilities: [{ Actions: ["*"] }] },
  {
    Alias: "both",
    Username: "carol",
    Password: "carol's password",
    APIKey: `${KEY}-carol`,
    Capabilities: [{ Actions: ["read:history"] }],
  },
  // Bacalhau's key user with a Username: the key logs in, the Username names it and is no login.
  { Username: "dave", APIKey: `${KEY}-dave`, Capabilities: [{ Actions: ["read:job"] }] },
];
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("Authenticator", () => {
  const auth = new Authenticator(USERS);

  it("accepts Basic with a plain or bcrypt password (usernames ignore case) and names the user by Alias, else Username", async () => {
    expect(await auth.authenticate(basic("alice", "plain password"))).toEqual({
      ok: true,
      principal: { id: "ops", actions: ["read:node", "write:node"] },
    });
    expect(await auth.authenticate(basic("ALICE", "plain password"))).toMatchObject({
      ok: true,
      principal: { id: "ops" },
    });
    expect(await auth.authenticate(basic("bob", "bcrypt password"))).toEqual({
      ok: true,
      principal: { id: "bob", actions: ["read:*", "write:node"] },
    });
    expect(await auth.authenticate(basic("carol", "carol's password"))).toMatchObject({
      ok: true,
      principal: { id: "both" },
    });
  });

  it("accepts Bearer API keys, the scheme in any case", async () => {
    expect(await auth.authenticate(`Bearer ${KEY}`)).toEqual({ ok: true, principal: { id: "ci", actions: ["*"] } });
    expect(await auth.authenticate(`bearer ${KEY}-carol`)).toMatchObject({ ok: true, principal: { id: "both" } });
    expect(await auth.authenticate(`Bearer ${KEY}-dave`)).toEqual({
      ok: true,
      principal: { id: "dave", actions: ["read:job"] },
    });
    expect(await auth.authenticate(basic("dave", `${KEY}-dave`))).toMatchObject({ ok: false });
  });

  it("refuses wrong, partial and malformed credentials without saying which part was wrong", async () => {
    const refused = [
      [basic("alice", "plain passwor"), "invalid username or password"],
      [basic("alice", "plain password "), "invalid username or password"],
      [basic("nobody", "plain password"), "invalid username or password"],
      [basic("bob", "wrong"), "invalid username or password"],
      [basic("ci", KEY), "invalid username or password"],
      [`Bearer ${KEY.slice(0, -1)}`, "invalid API key"],
      [`Bearer ${KEY}x`, "invalid API key"],
      ["Bearer plain password", "unsupported Authorization header"],
      [`Basic ${Buffer.from("alice").toString("base64")}`, "malformed Basic credentials"],
      ["Basic !!!", "malformed Basic credentials"],
      [`Digest ${KEY}`, "unsupported Authorization header"],
      [KEY, "unsupported Authorization header"],
      ["Bearer ", 'Authorization header "Bearer" has no credential after it'],
      ["bearer", 'Authorization header "bearer" has no credential after it'],
      ["Basic  ", 'Authorization header "Basic" has no credential after it'],
    ] as const;
    for (const [header, reason] of refused) {
      const result = await auth.authenticate(header);
      expect(result.ok, header).toBe(false);
      expect(!result.ok && result.reason, header).toMatch(new RegExp(`^${reason}`));
    }
  });

  it("runs bcrypt once per credential within the cache time, never caches failures, and verifies again after expiry", async () => {
    const clock = new ManualClock();
    const cached = new Authenticator(USERS, { cacheTtlMs: 60_000, now: () => clock.now() });
    const good = basic("bob", "bcrypt password");
    const results = await Promise.all([cached.authenticate(good), cached.authenticate(good)]);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(cached.bcryptVerifications).toBe(1);
    expect((await cached.authenticate(good)).ok).toBe(true);
    expect(cached.bcryptVerifications).toBe(1);
    expect((await cached.authenticate(basic("bob", "wrong"))).ok).toBe(false);
    expect((await cached.authenticate(basic("bob", "wrong"))).ok).toBe(false);
    expect(cached.bcryptVerifications).toBe(3);
    // Another user's name with the cached password is not the cached credential.
    expect((await cached.authenticate(basic("alice", "bcrypt password"))).ok).toBe(false);
    await clock.advance(60_001);
    expect((await cached.authenticate(good)).ok).toBe(true);
    expect(cached.bcryptVerifications).toBe(4);
  });

  it("makes an unknown username pay bcrypt at the highest configured cost, so timing does not tell which names exist", async () => {
    const mixed = new Authenticator([
      ...USERS,
      { Username: "dave", Password: bcrypt.hashSync("dave's password", 5), Capabilities: [{ Actions: ["read:node"] }] },
    ]);
    expect(mixed.unknownUserCost).toBe(5);
    expect(await mixed.authenticate(basic("nobody", "bcrypt password"))).toEqual({
      ok: false,
      reason: "invalid username or password",
    });
    expect(mixed.bcryptVerifications).toBe(1);
    expect((await mixed.authenticate(basic("nobody", "bcrypt password"))).ok).toBe(false);
    expect(mixed.bcryptVerifications).toBe(2); // a failure is never cached, an unknown name's neither
    // Without bcrypt users nobody pays bcrypt: a plain password is checked at once either way.
    const plainOnly = new Authenticator(USERS.filter((u) => u.Username !== "bob"));
    expect(plainOnly.unknownUserCost).toBeUndefined();
    expect((await plainOnly.authenticate(basic("nobody", "x"))).ok).toBe(false);
    expect(plainOnly.bcryptVerifications).toBe(0);
  });

  it("runs at most maxConcurrentBcrypt uncached bcrypt checks at once and answers the rest 503 with Retry-After 1", async () => {
    const capped = new Authenticator(USERS, { maxConcurrentBcrypt: 2 });
    const good = basic("bob", "bcrypt password");
    expect((await capped.authenticate(good)).ok).toBe(true); // cached from here on
    const first = capped.authenticate(basic("bob", "wrong 1"));
    const second = capped.authenticate(basic("nobody", "wrong 2")); // an unknown name counts too
    const sameAsFirst = capped.authenticate(basic("bob", "wrong 1")); // shares the first's check
    await expect(capped.authenticate(basic("bob", "wrong 3"))).rejects.toMatchObject({
      kind: "Unavailable",
      retryAfterSeconds: 1,
    });
    await expect(capped.authenticate(basic("nobody", "wrong 4"))).rejects.toMatchObject({ kind: "Unavailable" });
    // What needs no bcrypt is answered meanwhile: a cached success, plain passwords, API keys.
    expect((await capped.authenticate(good)).ok).toBe(true);
    expect((await capped.authenticate(basic("alice", "plain password"))).ok).toBe(true);
    expect((await capped.authenticate(`Bearer ${KEY}`)).ok).toBe(true);
    expect((await Promise.all([first, second, sameAsFirst])).map((r) => r.ok)).toEqual([false, false, false]);
    expect(capped.bcryptVerifications).toBe(3);
    // Once they are done, the next check runs.
    expect(await capped.authenticate(basic("bob", "wrong 3"))).toEqual({
      ok: false,
      reason: "invalid username or password",
    });
    expect(capped.bcryptVerifications).toBe(4);
  });
});
