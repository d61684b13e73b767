import type { AuthUser } from "./auth-users.ts";
import { CONFIG_KEYS, type ConfigKey, type ShoalConfig } from "./keys.ts";

/** What a secret that is set shows instead of itself; an unset one stays empty, so that "not set" can be seen. */
export const REDACTED = "<redacted>";

// A URL's user information (`nats://user:password@host`, `kurrentdb://admin:changeit@a:2113,b:2113`): up to the
// last "@" before the path, so that an unencoded "@" in a password does not leave its end showing.
const URL_CREDENTIALS = /^(\s*[a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i;
// A comma that starts another URL of a list (Orchestrator.NATS.URL), not one between a URL's hosts.
const NEXT_URL = /,(?=\s*[a-z][a-z0-9+.-]*:\/\/)/i;

/** The password of `user:password@`, or the whole of `token@` (NATS reads a lone user as a token). */
function withoutCredentials(text: string): string {
  return text
    .split(NEXT_URL)
    .map((url) =>
      url.replace(URL_CREDENTIALS, (_, scheme: string, userInfo: string) => {
        const colon = userInfo.indexOf(":");
        return `${scheme}${colon === -1 ? REDACTED : `${userInfo.slice(0, colon)}:${REDACTED}`}@`;
      }),
    )
    .join(",");
}

const redactedUser = (user: AuthUser): AuthUser => ({
  ...user,
  ...(user.Password === undefined ? {} : { Password: REDACTED }),
  ...(user.APIKey === undefined ? {} : { APIKey: REDACTED }),
});

function redacted(key: ConfigKey, value: unknown): unknown {
  if (CONFIG_KEYS[key].kind === "users") return (value as AuthUser[]).map(redactedUser);
  if (CONFIG_KEYS[key].secret === true) return value === "" ? "" : REDACTED;
  if (typeof value === "string") return withoutCredentials(value);
  if (Array.isArray(value)) return value.map((item) => (typeof item === "string" ? withoutCredentials(item) : item));
  return value;
}

/**
 * The config with its secrets replaced by REDACTED: the keys marked secret, API.Auth.Users' passwords and API keys,
 * and credentials written into URLs (a KurrentDB connection string, a NATS URL). What `shoal config list` prints and
 * GET /api/v1/agent/config answers.
 */
export function redactedConfig(config: ShoalConfig): Record<ConfigKey, unknown> {
  const out: Partial<Record<ConfigKey, unknown>> = {};
  for (const key of Object.keys(CONFIG_KEYS) as ConfigKey[]) out[key] = redacted(key, config[key]);
  return out as Record<ConfigKey, unknown>;
}
