import { createHash } from "node:crypto";
import { ConfigError } from "./config-error.ts";

/**
 * The actions a capability may grant, in Bacalhau's vocabulary (`read:node`, `write:job`, …,
 * `*`, `read:*`, `write:*`) plus Shoal's `read:history` for the node history routes.
 */
export const API_ACTIONS = [
  "read:node",
  "write:node",
  "read:job",
  "write:job",
  "read:agent",
  "write:agent",
  "read:history",
  "read:*",
  "write:*",
  "*",
] as const;
export type ApiAction = (typeof API_ACTIONS)[number];

/**
 * One entry of `API.Auth.Users`, Bacalhau's shape. A user logs in with Username and Password, or with an APIKey,
 * or (Shoal's) both. With an APIKey and no Password the Username only names the user; a Password without a
 * Username is checked but never used (both as in Bacalhau's pkg/authz).
 */
export interface AuthUser {
  readonly Alias?: string;
  readonly Username?: string;
  /** Plain text or a bcrypt hash ($2a$/$2b$/$2y$); a login only with the Username. */
  readonly Password?: string;
  readonly APIKey?: string;
  readonly Capabilities: readonly { readonly Actions: readonly ApiAction[] }[];
}

export const ANONYMOUS_ACCESS = ["read", "none"] as const;
export type AnonymousAccess = (typeof ANONYMOUS_ACCESS)[number];

const USER_FIELDS = ["Alias", "Username", "Password", "APIKey", "Capabilities"];
// Names end up in the history and in CLI tables: no spaces, no control characters, no ':'
// (which would end a Basic username).
const NAME = /^[A-Za-z0-9._@-]+$/;
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;
// Lengths as Bacalhau checks them, so a config that Bacalhau accepts is accepted here.
const PASSWORD_LENGTH = [10, 255] as const;
const API_KEY = /^[\x21-\x7e]{20,255}$/;

export const isBcryptHash = (password: string): boolean => password.startsWith("$2");

/** A user known by its key alone: a digest of the key names it, since any part of the key would give part away. */
const keyUserName = (key: string): string => `api-key-${createHash("sha256").update(key).digest("hex").slice(0, 12)}`;

/** Who the history names for this user: the Alias, else the Username, else a digest of the APIKey. */
export const identityOf = (user: AuthUser): string =>
  user.Alias ?? user.Username ?? (user.APIKey === undefined ? "" : keyUserName(user.APIKey));

function entryName(at: string, e: Record<string, unknown>): string {
  const name = typeof e.Alias === "string" ? e.Alias : typeof e.Username === "string" ? e.Username : undefined;
  return name !== undefined && NAME.test(name) && name.length <= 128 ? `${at} (${name})` : at;
}

function parseCapabilities(raw: unknown, fail: (message: string) => never): AuthUser["Capabilities"] {
  if (!Array.isArray(raw) || raw.length === 0)
    fail('Capabilities must be a non-empty list such as [{"Actions": ["read:node"]}]');
  return raw.map((cap, j) => {
    if (cap === null || typeof cap !== "object" || Array.isArray(cap))
      fail(`Capabilities[${j}] must be a mapping with Actions`);
    for (const f of Object.keys(cap))
      if (f !== "Actions") fail(`Capabilities[${j}]: unknown field ${f} (expected Actions)`);
    const actions = (cap as { Actions?: unknown }).Actions;
    if (!Array.isArray(actions) || actions.length === 0)
      fail(`Capabilities[${j}].Actions must be a non-empty list of actions`);
    for (const a of actions) {
      if (typeof a !== "string" || !(API_ACTIONS as readonly string[]).includes(a)) {
        fail(
          `Capabilities[${j}].Actions: unknown action ${JSON.stringify(a)} (expected one of ${API_ACTIONS.join(", ")})`,
        );
      }
    }
    return { Actions: actions as ApiAction[] };
  });
}

function parseUser(raw: unknown, at: string, fail: (at: string, message: string) => never): AuthUser {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    fail(at, "expected a mapping with Username/Password or APIKey, and Capabilities");
  const e = raw as Record<string, unknown>;
  const here = entryName(at, e);
  const no: (message: string) => never = (message) => fail(here, message);
  for (const f of Object.keys(e))
    if (!USER_FIELDS.includes(f)) no(`unknown field ${f} (expected ${USER_FIELDS.join(", ")})`);
  for (const f of ["Alias", "Username", "Password", "APIKey"]) {
    if (e[f] !== undefined && (typeof e[f] !== "string" || e[f] === "")) no(`${f} must be a non-empty string`);
  }
  const { Alias, Username, Password, APIKey } = e as Record<string, string | undefined>;
  if (Alias !== undefined && !(NAME.test(Alias) && Alias.length <= 128))
    no("Alias must be 1-128 letters, digits or . _ @ -");
  if (Username !== undefined && !(NAME.test(Username) && Username.length <= 100))
    no("Username must be 1-100 letters, digits or . _ @ -");
  // Bacalhau's rule (pkg/authz validateUser): a user has Username and Password, or an APIKey.
  if (APIKey === undefined) {
    if (Username === undefined && Password === undefined) no("give Username and Password, or an APIKey");
    if (Password === undefined) no("a Username needs a Password to log in with, or an APIKey (which it then names)");
    if (Username === undefined) no("a Password needs the Username it goes with, or give an APIKey");
  }
  if (Password !== undefined) {
    if (isBcryptHash(Password)) {
      if (!BCRYPT.test(Password))
        no(
          "Password looks like a bcrypt hash ($2…) but is not a valid one ($2a$, $2b$ or $2y$, cost 04-31, 53 characters)",
        );
    } else if (Password.length < PASSWORD_LENGTH[0] || Password.length > PASSWORD_LENGTH[1]) {
      no(`a plain Password must be ${PASSWORD_LENGTH[0]}-${PASSWORD_LENGTH[1]} characters (or give a bcrypt hash)`);
    }
  }
  if (APIKey !== undefined && !API_KEY.test(APIKey)) no("APIKey must be 20-255 printable characters without spaces");
  const Capabilities = parseCapabilities(e.Capabilities, no);
  return {
    ...(Alias === undefined ? {} : { Alias }),
    ...(Username === undefined ? {} : { Username }),
    ...(Password === undefined ? {} : { Password }),
    ...(APIKey === undefined ? {} : { APIKey }),
    Capabilities,
  };
}

/**
 * `API.Auth.Users` from YAML (a list) or from `-c`/an environment variable (a JSON list).
 * Usernames and identities are unique ignoring case, API keys unique exactly; errors name the
 * entry but never print a secret.
 */
export function parseAuthUsers(raw: unknown, source: string, key: string): AuthUser[] {
  const fail: (at: string, message: string) => never = (at, message) => {
    throw new ConfigError(`${source}: ${at}: ${message}`);
  };
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      fail(
        key,
        'expected a JSON list such as [{"Alias":"ci","APIKey":"…","Capabilities":[{"Actions":["read:node"]}]}]',
      );
    }
  }
  if (!Array.isArray(value)) fail(key, "expected a list of users");
  const users = value.map((entry, i) => parseUser(entry, `${key}[${i}]`, fail));
  const seen = {
    username: new Map<string, number>(),
    identity: new Map<string, number>(),
    apiKey: new Map<string, number>(),
  };
  users.forEach((user, i) => {
    const at = `${key}[${i}] (${identityOf(user)})`;
    const check = (map: Map<string, number>, value: string | undefined, what: string) => {
      if (value === undefined) return;
      const other = map.get(value);
      if (other !== undefined) fail(at, `${what} (also ${key}[${other}])`);
      map.set(value, i);
    };
    check(seen.username, user.Username?.toLowerCase(), `duplicate Username ${user.Username} (usernames ignore case)`);
    check(
      seen.identity,
      identityOf(user).toLowerCase(),
      `duplicate identity ${identityOf(user)}: two users would be recorded as the same person (Alias, else Username; ignoring case)`,
    );
    check(seen.apiKey, user.APIKey, "duplicate APIKey");
  });
  return users;
}
