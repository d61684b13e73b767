import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

export interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  /** A list, or each service with the condition it waits for (`service_completed_successfully`). */
  depends_on?: string[] | Record<string, { condition: string }>;
  entrypoint?: string[];
  volumes?: string[];
  ports?: string[];
  /** Ports the service listens on for the others on the compose network, published or not. */
  expose?: string[];
  /** Secrets it is given, each a file /run/secrets/<name>. */
  secrets?: string[];
}

export const repoRoot = join(import.meta.dirname, "../..");

/** docker-compose.yml as compose reads it: YAML merge keys (<<) resolved, which YAML 1.2 leaves to an option. */
export const compose = parse(readFileSync(join(repoRoot, "docker-compose.yml"), "utf8"), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
  /** Each secret's source: here, the variable of the shell running compose that holds it. */
  secrets: Record<string, { environment?: string; file?: string }>;
};

/** Compose's interpolation, enough for this file: `${NAME:?message}` must be given, `${NAME:-default}` may be. */
export function interpolate(value: string, given: Readonly<Record<string, string>>): string {
  return value.replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_, name: string, op?: string, rest?: string) => {
    const v = given[name];
    if (v !== undefined && v !== "") return v;
    if (op === "?") throw new Error(`required variable ${name} is missing a value: ${rest}`);
    return op === "-" ? rest! : "";
  });
}

/** A service's environment as its container gets it, with `given` as the variables of the shell running compose. */
export function serviceEnv(name: string, given: Readonly<Record<string, string>>): Record<string, string> {
  const env = compose.services[name]!.environment ?? {};
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(v, given)]));
}

/** A NATS service's config file on this machine, from its command and its mount of deploy/nats. */
export function natsConfigFile(name: string): string {
  const s = compose.services[name]!;
  const file = s.command![s.command!.indexOf("--config") + 1]!;
  const mount = s.volumes!.find((v) => v.startsWith("./") && file.startsWith(`${v.split(":")[1]}/`))!;
  const [source, target] = mount.split(":") as [string, string];
  return join(repoRoot, source, file.slice(target.length + 1));
}

/** The variable compose reads a compute node's public key from (SHOAL_COMPUTE_1_NKEY for compute-1). */
export const nkeyVariable = (computeService: string) =>
  `SHOAL_${computeService.toUpperCase().replaceAll("-", "_")}_NKEY`;

/** The services a service waits for, whichever form its depends_on takes. */
export const dependencies = (service: ComposeService): string[] =>
  Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
