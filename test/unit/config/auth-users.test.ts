import { writeFileSync } from "node:fs";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { identityOf } from "../../../src/config/auth-users.ts";
import { ConfigError } from "../../../src/config/config-error.ts";
import { loadConfig } from "../../../src/config/load-config.ts";
import { configFile, tempDir } from "../../support/fixtures.ts";

const KEY = "k".repeat(24);
const HASH = bcrypt.hashSync("correct horse battery", 4);
const users = (list: unknown) =>
  loadConfig({ env: {}, settings: [`API.Auth.Users=${typeof list === "string" ? list : JSON.stringify(list)}`] })[
    "API.Auth.Users"
  ];
const refusal = (list: unknown): string => {
  try {
    users(list);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("accepted");
};

describe("API.Auth.Users", () => {
  it("defaults to no users and anonymous read", () => {
    const c = loadConfig({ env: {} });
    expect(c["API.Auth.Users"]).toEqual([]);
    expect(c["API.Auth.AnonymousAccess"]).toBe("read");
  });

  it("reads Bacalhau's shape from YAML", () => {
    const file = configFile(
      `API:
  Auth:
    AnonymousAccess: none
    Users:
      - Alias: ops
        Username: alice
        Password: "${HASH}"
        Capabilities:
          - Actions: [read:node, write:node]
          - Actions: [read:history]
      - Alias: ci
        APIKey: ${KEY}
        Capabilities: [{Actions: ["read:*"]}]
`,
    );
    const c = loadConfig({ env: {}, files: [file] });
    expect(c["API.Auth.AnonymousAccess"]).toBe("none");
    expect(c["API.Auth.Users"]).toEqual([
      {
        Alias: "ops",
        Username: "alice",
        Password: HASH,
        Capabilities: [{ Actions: ["read:node", "write:node"] }, { Actions: ["read:history"] }],
      },
      { Alias: "ci", APIKey: KEY, Capabilities: [{ Actions: ["read:*"] }] },
    ]);
  });

  it("reads a JSON list from -c and from SHOAL_API_AUTH_USERS, like Overrides", () => {
    const list = [{ Username: "bob", Password: "long enough pw", APIKey: KEY, Capabilities: [{ Actions: ["*"] }] }];
    expect(users(list)).toEqual(list);
    expect(
      loadConfig({ env: { SHOAL_API_AUTH_USERS: JSON.stringify(list), SHOAL_API_AUTH_ANONYMOUSACCESS: "NONE" } }),
    ).toMatchObject({
      "API.Auth.Users": list,
      "API.Auth.AnonymousAccess": "none",
    });
  });

  it("takes what Bacalhau takes (pkg/authz validateUser): Username and Password, or an APIKey", () => {
    const cap = [{ Actions: ["read:job" as const] }];
    const list = [
      // A key user the Username names: the Username is no login without a Password.
      { Username: "walid", APIKey: KEY, Capabilities: cap },
      // A key alone: the history names it by a digest of the key.
      { APIKey: `${KEY}-2`, Capabilities: cap },
      // A Password without a Username is checked (as Bacalhau checks it) and never used.
      { Alias: "ci", Password: "long enough pw", APIKey: `${KEY}-3`, Capabilities: cap },
    ];
    expect(users(list)).toEqual(list);
    expect(identityOf(list[0]!)).toBe("walid");
    expect(identityOf(list[1]!)).toMatch(/^api-key-[0-9a-f]{12}$/);
    expect(identityOf(list[1]!)).not.toContain(KEY.slice(-5));
    expect(identityOf({ APIKey: `${KEY}-4`, Capabilities: cap })).not.toBe(identityOf(list[1]!));
  });

  it("reads the users of Bacalhau's own basic-auth test config, a key user without Alias among them", () => {
    // test_integration/common_assets/nodes_configs/17_basic_auth_enabled_orchestrator.yaml, its API.Auth part.
    const file = configFile(
      `API:
  Port: 1234
  Auth:
    Users:
      - Alias: snoopy
        Username: snoopyusername
        Password: snoopypassword
        Capabilities:
          - Actions: [ "read:node", "read:agent", "read:job", "write:job" ]
      - Alias: readonlyuser
        Username: readonlyusername
        Password: readonlyuserpassword
        Capabilities:
          - Actions: [ "read:node", "read:agent", "read:job" ]
      - Alias: snoopy-api-key
        APIKey: P7D4CBB284634DD081FAC33868436ECCL
        Capabilities:
          - Actions: [ "read:node", "read:agent", "read:job", "write:job" ]
      - APIKey: QWERTYHFGCBNSKFIREHFURHUFE7KEEFBN
        Capabilities:
          - Actions: [ "read:node", "read:agent", "read:job"]
`,
    );
    const read = loadConfig({ env: {}, files: [file] })["API.Auth.Users"];
    expect(read.map(identityOf).slice(0, 3)).toEqual(["snoopy", "readonlyuser", "snoopy-api-key"]);
    expect(read[3]).toEqual({
      APIKey: "QWERTYHFGCBNSKFIREHFURHUFE7KEEFBN",
      Capabilities: [{ Actions: ["read:node", "read:agent", "read:job"] }],
    });
  });

  it("refuses a bad AnonymousAccess with the source named", () => {
    expect(() => loadConfig({ env: {}, settings: ["API.Auth.AnonymousAccess=write"] })).toThrow(
      '-c API.Auth.AnonymousAccess=write: API.Auth.AnonymousAccess: expected one of read, none, got "write"',
    );
  });

  it("refuses bad entries, naming the entry and never printing a secret", () => {
    const cap = [{ Actions: ["read:node"] }];
    const cases: [unknown, string][] = [
      ["not json", "API.Auth.Users: expected a JSON list"],
      [{ Username: "a" }, "API.Auth.Users: expected a list of users"],
      [["x"], "API.Auth.Users[0]: expected a mapping"],
      [
        [{ Username: "bob", Password: "long enough pw", Capabilities: cap, Role: "admin" }],
        "API.Auth.Users[0] (bob): unknown field Role",
      ],
      [
        [{ Username: "bob", Capabilities: cap }],
        "API.Auth.Users[0] (bob): a Username needs a Password to log in with, or an APIKey",
      ],
      [
        [{ Password: "long enough pw", Alias: "x", Capabilities: cap }],
        "API.Auth.Users[0] (x): a Password needs the Username it goes with, or give an APIKey",
      ],
      [[{ Alias: "x", Capabilities: cap }], "API.Auth.Users[0] (x): give Username and Password, or an APIKey"],
      [
        [{ Username: "bob", Password: "short", Capabilities: cap }],
        "API.Auth.Users[0] (bob): a plain Password must be 10-255 characters",
      ],
      [[{ Username: "bob", Password: "$2b$10$tooshort", Capabilities: cap }], "looks like a bcrypt hash"],
      [
        [{ Username: "b o b", Password: "long enough pw", Capabilities: cap }],
        "API.Auth.Users[0]: Username must be 1-100 letters",
      ],
      [[{ Username: "bob:x", Password: "long enough pw", Capabilities: cap }], "Username must be"],
      [[{ Alias: "bad\nname", APIKey: KEY, Capabilities: cap }], "Alias must be 1-128"],
      [
        [{ Alias: "ci", APIKey: "short", Capabilities: cap }],
        "API.Auth.Users[0] (ci): APIKey must be 20-255 printable characters",
      ],
      [
        [{ Username: "bob", Password: "short", APIKey: KEY, Capabilities: cap }],
        "API.Auth.Users[0] (bob): a plain Password must be 10-255 characters",
      ],
      [[{ Alias: "ci", APIKey: KEY }], "API.Auth.Users[0] (ci): Capabilities must be a non-empty list"],
      [[{ Alias: "ci", APIKey: KEY, Capabilities: [] }], "Capabilities must be a non-empty list"],
      [
        [{ Alias: "ci", APIKey: KEY, Capabilities: [{ Actions: [] }] }],
        "Capabilities[0].Actions must be a non-empty list",
      ],
      [
        [{ Alias: "ci", APIKey: KEY, Capabilities: [{ Actions: ["read:node"], Resources: ["x"] }] }],
        "Capabilities[0]: unknown field Resources",
      ],
      [
        [{ Alias: "ci", APIKey: KEY, Capabilities: [{ Actions: ["read:nodes"] }] }],
        'Capabilities[0].Actions: unknown action "read:nodes"',
      ],
      [
        [{ Alias: "ci", APIKey: KEY, Capabilities: [{ Actions: ["admin"] }] }],
        'unknown action "admin" (expected one of read:node, write:node',
      ],
      [[{ Alias: 5, APIKey: KEY, Capabilities: cap }], "Alias must be a non-empty string"],
    ];
    for (const [list, message] of cases) {
      const error = refusal(list);
      expect(error, JSON.stringify(list)).toContain(message);
      expect(error.startsWith("-c API.Auth.Users=…: "), error).toBe(true);
    }
    expect(refusal([{ Alias: "ci", APIKey: KEY, Capabilities: [{ Actions: ["nope"] }] }])).not.toContain(KEY);
    expect(refusal([{ Username: "bob", Password: "secret-password-1", Capabilities: [] }])).not.toContain(
      "secret-password-1",
    );
    const fromFile = join(tempDir(), "c.yaml");
    writeFileSync(
      fromFile,
      `API:\n  Auth:\n    Users:\n      - {Alias: ci, APIKey: ${KEY}, Capabilities: [{Actions: [nope]}]}\n      - {Username: bob, Password: "supersecretpw", Capabilities: []}\n`,
    );
    expect(() => loadConfig({ env: {}, files: [fromFile] })).toThrow(
      `${fromFile}: API.Auth.Users[0] (ci): Capabilities[0].Actions: unknown action "nope"`,
    );
    try {
      loadConfig({ env: {}, files: [fromFile] });
    } catch (e) {
      expect((e as Error).message).not.toContain(KEY);
    }
  });

  it("refuses duplicate usernames, identities and API keys, ignoring case where Bacalhau does", () => {
    const cap = [{ Actions: ["*"] }];
    const pw = "long enough pw";
    expect(
      refusal([
        { Username: "Bob", Password: pw, Capabilities: cap },
        { Alias: "x", Username: "bob", Password: pw, Capabilities: cap },
      ]),
    ).toContain("API.Auth.Users[1] (x): duplicate Username bob (usernames ignore case) (also API.Auth.Users[0])");
    expect(
      refusal([
        { Alias: "ops", APIKey: KEY, Capabilities: cap },
        { Alias: "OPS", APIKey: `${KEY}2`, Capabilities: cap },
      ]),
    ).toContain("API.Auth.Users[1] (OPS): duplicate identity OPS");
    // bob recorded twice: once by username, once by alias.
    expect(
      refusal([
        { Username: "bob", Password: pw, Capabilities: cap },
        { Alias: "bob", APIKey: KEY, Capabilities: cap },
      ]),
    ).toContain("API.Auth.Users[1] (bob): duplicate identity bob");
    const dupKey = refusal([
      { Alias: "a", APIKey: KEY, Capabilities: cap },
      { Alias: "b", APIKey: KEY, Capabilities: cap },
    ]);
    expect(dupKey).toContain("API.Auth.Users[1] (b): duplicate APIKey (also API.Auth.Users[0])");
  });
});
