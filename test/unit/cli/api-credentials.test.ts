import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { authorizationHeader, resolveCredentials } from "../../../src/cli/api-credentials.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { adminApiKeyPath } from "../../../src/security/admin-api-key.ts";
import { tempDir } from "../../support/fixtures.ts";

function dataDirWith(keys: { serve?: string; devstack?: string }): string {
  const dir = tempDir();
  for (const [where, key] of [[dir, keys.serve], [join(dir, "devstack"), keys.devstack]] as const) {
    if (key === undefined) continue;
    mkdirSync(join(where, "credentials"), { recursive: true });
    writeFileSync(adminApiKeyPath(where), `${key}\n`);
  }
  return dir;
}

const sources = (c: ReturnType<typeof resolveCredentials>) => c.candidates.map((x) => x.source);

describe("the CLI's credentials", () => {
  const dataDir = dataDirWith({ serve: "serve-key", devstack: "devstack-key" });
  const env = { SHOAL_API_KEY: "env-key", SHOAL_API_USERNAME: "envuser", SHOAL_API_PASSWORD: "envpass" };

  it("prefers flags over environment over key files, and an API key over a username at each level", () => {
    expect(resolveCredentials({ flags: { "api-key": "flag-key", username: "u", password: "p" }, env, dataDir }).candidates).toEqual([
      { kind: "bearer", key: "flag-key", source: "--api-key" },
    ]);
    expect(resolveCredentials({ flags: { username: "u", password: "p" }, env, dataDir }).candidates).toEqual([
      { kind: "basic", username: "u", password: "p", source: "--username/--password" },
    ]);
    expect(resolveCredentials({ flags: {}, env, dataDir }).candidates).toEqual([{ kind: "bearer", key: "env-key", source: "SHOAL_API_KEY" }]);
    expect(resolveCredentials({ flags: {}, env: { ...env, SHOAL_API_KEY: " " }, dataDir }).candidates).toEqual([
      { kind: "basic", username: "envuser", password: "envpass", source: "SHOAL_API_USERNAME/SHOAL_API_PASSWORD" },
    ]);
    // --username with the password from the environment, as a user keeping it out of `ps` would.
    expect(resolveCredentials({ flags: { username: "u" }, env: { SHOAL_API_PASSWORD: "envpass" }, dataDir }).candidates).toEqual([
      { kind: "basic", username: "u", password: "envpass", source: "--username/--password" },
    ]);
  });

  it("falls back to serve's and then devstack's generated admin key under DataDir", () => {
    const both = resolveCredentials({ flags: {}, env: {}, dataDir });
    expect(both.candidates.map((c) => c.kind === "bearer" && c.key)).toEqual(["serve-key", "devstack-key"]);
    expect(both.anonymousFallback).toBe(true);
    expect(resolveCredentials({ flags: {}, env: { SHOAL_API_KEY: "k" }, dataDir }).anonymousFallback).toBeUndefined();
    expect(sources(both)).toEqual([`the admin key in ${adminApiKeyPath(dataDir)}`, `the admin key in ${adminApiKeyPath(join(dataDir, "devstack"))}`]);
    const devstackOnly = dataDirWith({ devstack: "devstack-key" });
    const d = resolveCredentials({ flags: {}, env: {}, dataDir: devstackOnly });
    expect(d.candidates.map((c) => c.kind === "bearer" && c.key)).toEqual(["devstack-key"]);
    expect(d.notes).toEqual([`no admin key at ${adminApiKeyPath(devstackOnly)}`]);
  });

  it("sends nothing when nothing is found, and says what it looked for", () => {
    const empty = tempDir();
    expect(resolveCredentials({ flags: {}, env: {}, dataDir: empty })).toEqual({
      candidates: [],
      anonymousFallback: false,
      notes: [`no admin key at ${adminApiKeyPath(empty)}`, `no admin key at ${adminApiKeyPath(join(empty, "devstack"))}`],
    });
    const broken = dataDirWith({ serve: "" });
    expect(resolveCredentials({ flags: {}, env: {}, dataDir: broken }).notes[0]).toMatch(/is empty or malformed/);
    if (process.getuid?.() !== 0) {
      const unreadable = dataDirWith({ serve: "k" });
      chmodSync(adminApiKeyPath(unreadable), 0o000);
      expect(resolveCredentials({ flags: {}, env: {}, dataDir: unreadable }).notes[0]).toMatch(/cannot read/);
    }
  });

  it("refuses half a username/password pair and usernames with ':'", () => {
    expect(() => resolveCredentials({ flags: { username: "u" }, env: {}, dataDir })).toThrow(UsageError);
    expect(() => resolveCredentials({ flags: { password: "p" }, env: {}, dataDir })).toThrow(/give both a username and a password/);
    expect(() => resolveCredentials({ flags: {}, env: { SHOAL_API_USERNAME: "u" }, dataDir })).toThrow(/SHOAL_API_USERNAME\/SHOAL_API_PASSWORD: give both/);
    expect(() => resolveCredentials({ flags: { username: "a:b", password: "p" }, env: {}, dataDir })).toThrow(/cannot contain ':'/);
  });

  it("builds Bearer and Basic headers", () => {
    expect(authorizationHeader({ kind: "bearer", key: "k1", source: "" })).toBe("Bearer k1");
    expect(authorizationHeader({ kind: "basic", username: "bob", password: "pä:ss", source: "" })).toBe(`Basic ${Buffer.from("bob:pä:ss").toString("base64")}`);
  });
});
