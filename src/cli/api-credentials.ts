import { existsSync } from "node:fs";
import { join } from "node:path";
import { adminApiKeyPath } from "../security/admin-api-key.ts";
import { readSecret } from "../security/secret-file.ts";
import { isLoopbackHost } from "./is-loopback-host.ts";
import { UsageError } from "./usage-error.ts";

/** Credentials the CLI sends, and where they came from (said in errors, never the secret). */
export type ApiCredential =
  | { readonly kind: "bearer"; readonly key: string; readonly source: string }
  | { readonly kind: "basic"; readonly username: string; readonly password: string; readonly source: string };

export interface CredentialSources {
  readonly flags: {
    readonly "api-key"?: string | undefined;
    readonly username?: string | undefined;
    readonly password?: string | undefined;
  };
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * The configured DataDir: `serve` keeps its key in DataDir/credentials, `devstack` in DataDir/devstack/credentials.
   */
  readonly dataDir: string;
  /** The API host the credentials go to: this machine's key files go only to a loopback address. */
  readonly host: string;
}

export interface ResolvedCredentials {
  /** In order of preference; more than one only for generated key files (a 401 moves on to the next). */
  readonly candidates: readonly ApiCredential[];
  /**
   * The candidates were only found lying around (key files), not chosen by the user: if the API
   * refuses them all, ask once more without credentials, as anonymous read may allow.
   */
  readonly anonymousFallback?: boolean;
  /** What was looked for and not usable, for the error message when the API says 401. */
  readonly notes: readonly string[];
}

const nonEmpty = (v: string | undefined): string | undefined =>
  v === undefined || v.trim() === "" ? undefined : v.trim();

function basic(username: string | undefined, password: string | undefined, source: string): ApiCredential {
  if (username === undefined || password === undefined) {
    throw new UsageError(
      `${source}: give both a username and a password (--username/--password or SHOAL_API_USERNAME/SHOAL_API_PASSWORD)`,
    );
  }
  if (username.includes(":")) throw new UsageError("a username cannot contain ':'");
  return { kind: "basic", username, password, source };
}

/**
 * Flags first (an API key or a username and password, never both), then environment variables (an API key wins
 * over a username and password: Bacalhau's BACALHAU_API_KEY/…_USERNAME/…_PASSWORD, with SHOAL_ names), then the
 * admin key files on this machine. The key files hold this machine's `*` key: they are offered
 * only to this machine (a loopback host), never to whatever --api-host names, over plain HTTP.
 */
export function resolveCredentials({ flags, env, dataDir, host }: CredentialSources): ResolvedCredentials {
  // Only one of them would be sent: which the user meant, the command line cannot tell.
  if (flags["api-key"] !== undefined && (flags.username !== undefined || flags.password !== undefined))
    throw new UsageError("give --api-key or --username/--password, not both");
  const flagKey = nonEmpty(flags["api-key"]);
  if (flagKey !== undefined) return { candidates: [{ kind: "bearer", key: flagKey, source: "--api-key" }], notes: [] };
  if (flags.username !== undefined || flags.password !== undefined) {
    const source = "--username/--password";
    return {
      candidates: [
        basic(
          nonEmpty(flags.username) ?? nonEmpty(env.SHOAL_API_USERNAME),
          flags.password ?? nonEmpty(env.SHOAL_API_PASSWORD),
          source,
        ),
      ],
      notes: [],
    };
  }
  const envKey = nonEmpty(env.SHOAL_API_KEY);
  if (envKey !== undefined)
    return { candidates: [{ kind: "bearer", key: envKey, source: "SHOAL_API_KEY" }], notes: [] };
  if (nonEmpty(env.SHOAL_API_USERNAME) !== undefined || nonEmpty(env.SHOAL_API_PASSWORD) !== undefined) {
    const source = "SHOAL_API_USERNAME/SHOAL_API_PASSWORD";
    return {
      candidates: [basic(nonEmpty(env.SHOAL_API_USERNAME), nonEmpty(env.SHOAL_API_PASSWORD), source)],
      notes: [],
    };
  }
  if (!isLoopbackHost(host)) {
    return {
      candidates: [],
      anonymousFallback: false,
      notes: [`this machine's admin key is sent only to 127.0.0.1, ::1 or localhost, not to ${host}`],
    };
  }
  const candidates: ApiCredential[] = [];
  const notes: string[] = [];
  for (const file of [adminApiKeyPath(dataDir), adminApiKeyPath(join(dataDir, "devstack"))]) {
    if (!existsSync(file)) {
      notes.push(`no admin key at ${file}`);
      continue;
    }
    try {
      candidates.push({ kind: "bearer", key: readSecret(file), source: `the admin key in ${file}` });
    } catch (e) {
      notes.push((e as Error).message);
    }
  }
  return { candidates, notes, anonymousFallback: candidates.length > 0 };
}

export function authorizationHeader(credential: ApiCredential): string {
  return credential.kind === "bearer"
    ? `Bearer ${credential.key}`
    : `Basic ${Buffer.from(`${credential.username}:${credential.password}`, "utf8").toString("base64")}`;
}
