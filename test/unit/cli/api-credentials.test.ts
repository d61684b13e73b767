import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { authorizationHeader, resolveCredentials } from "../../../src/cli/api-credentials.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { adminApiKeyPath } from "../../../src/security/admin-api-key.ts";
import { tempDir } from "../../support/fixtures.ts";

function dataDirWith(keys: { serve?: string; devstack?: string }): string {
  const dir = tempDir();
  for (const [where, key] of [
    [dir, keys.serve],
    [join(dir, "devstack"), keys.devstack],
  ] as const) {
    if (key === undefined) continue;
    mkdirSync(join(where, "credentials"), { recursive: true });
    writeFileSync(adminApiKeyPath(where), `${key}\n`);
  }
  return dir;
}

const LOCAL = "127.0.0.1";
const sources = (c: ReturnType<typeof resolveCredentials>) => c.candidates.map((x) => x.source);

describe("the CLI's credentials", () => {
  const dataDir = dataDirWith({ serve: "serve-key", devstack: "devstack-key" });
  const env = { SHOAL_API_KEY: "env-key", SHOAL_API_USERNAME: "envuser", SHOAL_API_PASSWORD: "envpass" };

  it("prefers flags over environment over key files, and an API key over a username in the environment", () => {
    expect(resolveCredentials({ flags: { "api-key": "flag-key" }, env, dataDir, host: LOCAL }).candidates).toEqual([
      { kind: "bearer", key: "flag-key", source: "--api-key" },
    ]);
    expect(
      resolveCredentials({ flags: { username: "u", password: "p" }, env, dataDir, host: LOCAL }).candidates,
    ).toEqual([{ kind: "basic", username: "u", password: "p", source: "--username/--password" }]);
    expect(resolveCredentials({ flags: {}, env, dataDir, host: LOCAL }).candidates).toEqual([
      { kind: "bearer", key: "env-key", source: "SHOAL_API_KEY" },
    ]);
    expect(
      resolveCredentials({ flags: {}, env: { ...env, SHOAL_API_KEY: " " }, dataDir, host: LOCAL }).candidates,
    ).toEqual([
      { kind: "basic", username: "envuser", password: "envpass", source: "SHOAL_API_USERNAME/SHOAL_API_PASSWORD" },
    ]);
    // --username with the password from the environment, as a user keeping it out of `ps` would.
    expect(
      resolveCredentials({ flags: { username: "u" }, env: { SHOAL_API_PASSWORD: "envpass" }, dataDir, host: LOCAL })
        .candidates,
    ).toEqual([{ kind: "basic", username: "u", password: "envpass", source: "--username/--password" }]);
  });

  it("falls back to serve's and then devstack's generated admin key under DataDir", () => {
    const both = resolveCredentials({ flags: {}, env: {}, dataDir, host: LOCAL });
    expect(both.candidates.map((c) => c.kind === "bearer" && c.key)).toEqual(["serve-key", "devstack-key"]);
    expect(both.anonymousFallback).toBe(true);
    expect(
      resolveCredentials({ flags: {}, env: { SHOAL_API_KEY: "k" }, dataDir, host: LOCAL }).anonymousFallback,
    ).toBeUndefined();
    expect(sources(both)).toEqual([
      `the admin key in ${adminApiKeyPath(dataDir)}`,
      `the admin key in ${adminApiKeyPath(join(dataDir, "devstack"))}`,
    ]);
    const devstackOnly = dataDirWith({ devstack: "devstack-key" });
    const d = resolveCredentials({ flags: {}, env: {}, dataDir: devstackOnly, host: LOCAL });
    expect(d.candidates.map((c) => c.kind === "bearer" && c.key)).toEqual(["devstack-key"]);
    expect(d.notes).toEqual([`no admin key at ${adminApiKeyPath(devstackOnly)}`]);
  });

  it("offers this machine's admin keys only to a loopback host; elsewhere only what the user gave", () => {
    for (const host of [
      "127.0.0.1",
      "127.1.2.3",
      "localhost",
      "LOCALHOST",
      "::1",
      "[::1]",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
    ]) {
      expect(sources(resolveCredentials({ flags: {}, env: {}, dataDir, host })), host).toHaveLength(2);
    }
    for (const host of [
      "other-box",
      "10.0.0.7",
      "192.168.1.5",
      "128.0.0.1",
      "::",
      "0.0.0.0",
      "::ffff:10.0.0.7",
      "localhost.example.com",
      "127.0.0.1.nip.io",
    ]) {
      const r = resolveCredentials({ flags: {}, env: {}, dataDir, host });
      expect(r, host).toEqual({
        candidates: [],
        anonymousFallback: false,
        notes: [`this machine's admin key is sent only to 127.0.0.1, ::1 or localhost, not to ${host}`],
      });
    }
    expect(resolveCredentials({ flags: { "api-key": "k" }, env: {}, dataDir, host: "other-box" }).candidates).toEqual([
      { kind: "bearer", key: "k", source: "--api-key" },
    ]);
    expect(resolveCredentials({ flags: {}, env, dataDir, host: "other-box" }).candidates).toEqual([
      { kind: "bearer", key: "env-key", source: "SHOAL_API_KEY" },
    ]);
    expect(
      resolveCredentials({
        flags: {},
        env: { SHOAL_API_USERNAME: "u", SHOAL_API_PASSWORD: "p" },
        dataDir,
        host: "other-box",
      }).candidates,
    ).toEqual([{ kind: "basic", username: "u", password: "p", source: "SHOAL_API_USERNAME/SHOAL_API_PASSWORD" }]);
  });

  it("sends nothing when nothing is found, and says what it looked for", () => {
    const empty = tempDir();
    expect(resolveCredentials({ flags: {}, env: {}, dataDir: empty, host: LOCAL })).toEqual({
      candidates: [],
      anonymousFallback: false,
      notes: [
        `no admin key at ${adminApiKeyPath(empty)}`,
        `no admin key at ${adminApiKeyPath(join(empty, "devstack"))}`,
      ],
    });
    const broken = dataDirWith({ serve: "" });
    expect(resolveCredentials({ flags: {}, env: {}, dataDir: broken, host: LOCAL }).notes[0]).toMatch(
      /is empty or malformed/,
    );
    if (process.getuid?.() !== 0) {
      const unreadable = dataDirWith({ serve: "k" });
      chmodSync(adminApiKeyPath(unreadable), 0o000);
      expect(resolveCredentials({ flags: {}, env: {}, dataDir: unreadable, host: LOCAL }).notes[0]).toMatch(
        /cannot read/,
      );
    }
  });

  it("refuses --api-key with --username or --password: which was meant is unknown", () => {
    for (const flags of [
      { "api-key": "k", username: "u", password: "p" },
      { "api-key": "k", username: "u" },
      { "api-key": "k", password: "p" },
    ]) {
      expect(() => resolveCredentials({ flags, env: {}, dataDir, host: LOCAL })).toThrow(
        new UsageError("give --api-key or --username/--password, not both"),
      );
    }
  });

  it("refuses half a username/password pair and usernames with ':'", () => {
    expect(() => resolveCredentials({ flags: { username: "u" }, env: {}, dataDir, host: LOCAL })).toThrow(UsageError);
    expect(() => resolveCredentials({ flags: { password: "p" }, env: {}, dataDir, host: LOCAL })).toThrow(
      /give both a username and a password/,
    );
    expect(() => resolveCredentials({ flags: {}, env: { SHOAL_API_USERNAME: "u" }, dataDir, host: LOCAL })).toThrow(
      /SHOAL_API_USERNAME\/SHOAL_API_PASSWORD: give both/,
    );
    expect(() =>
      resolveCredentials({ flags: { username: "a:b", password: "p" }, env: {}, dataDir, host: LOCAL }),
    ).toThrow(/cannot contain ':'/);
  });

  it("builds Bearer and Basic headers", () => {
    expect(authorizationHeader({ kind: "bearer", key: "k1", source: "" })).toBe("Bearer k1");
    expect(authorizationHeader({ kind: "basic", username: "bob", password: "pä:ss", source: "" })).toBe(
      `Basic ${Buffer.from("bob:pä:ss").toString("base64")}`,
    );
  });
});
