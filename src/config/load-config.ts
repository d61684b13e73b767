import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import type * as Yaml from "yaml";
import { ConfigError } from "./config-error.ts";
import { checkTlsKeys } from "./api-tls-files.ts";
import { bacalhauConfigKey, isBacalhauConfigKey } from "./bacalhau-config-keys.ts";
import { coerce } from "./coerce.ts";
import { CONFIG_KEYS, canonicalKey, defaultConfig, type ConfigKey, type ShoalConfig } from "./keys.ts";

/** The longest pause between an update's rounds of stops that is a pace rather than a halt. */
const MAX_EXECUTION_LIMIT_BACKOFF_MS = 3_600_000;

export interface ConfigSources {
  /** `--config FILE` values, in order. */
  readonly files?: readonly string[];
  /** `-c` values, in order: `Key=Value`, a bare boolean `Key`, or a YAML file path. */
  readonly settings?: readonly string[];
  /** Usually process.env; only SHOAL_* variables that name a key are read. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Values from dedicated flags (e.g. --node-id), already typed; highest precedence. */
  readonly flags?: Partial<ShoalConfig>;
}

/** Where a key's effective value came from: `default`, `file PATH`, `env SHOAL_…`, `flag -c` or `flag`. */
export type ConfigOrigin = "default" | "flag" | "flag -c" | `file ${string}` | `env ${string}`;

export interface TracedConfig {
  readonly config: ShoalConfig;
  /** Every key's origin: the source whose value won. */
  readonly origins: Readonly<Record<ConfigKey, ConfigOrigin>>;
  /** Bacalhau's keys that Shoal does not have, each named with its source: ignored. */
  readonly warnings: readonly string[];
}

/**
 * Bacalhau's keys that stop Shoal rather than being ignored: ignoring them would let callers do more than the
 * file says.
 */
const REFUSED_BACALHAU_KEYS: Readonly<Record<string, string>> = {
  "API.Auth.AccessPolicyPath":
    "Shoal does not run Bacalhau's access policies; the Capabilities of API.Auth.Users say who may do what",
};

/** A key Shoal does not have: a warning when it is Bacalhau's, else the error that stops the load. */
function notShoals(path: string, source: string, warnings: string[], unknown: () => ConfigError): void {
  const bacalhau = bacalhauConfigKey(path);
  if (bacalhau === undefined) throw unknown();
  const refused = REFUSED_BACALHAU_KEYS[bacalhau];
  if (refused !== undefined) throw new ConfigError(`${source}: Bacalhau's ${bacalhau} cannot be used: ${refused}`);
  const warning = `${source}: Bacalhau's ${bacalhau} is not a Shoal setting; ignored`;
  if (!warnings.includes(warning)) warnings.push(warning);
}

/** What a config key name can look like; anything else typed as one (a "Key:value" typo) is not echoed. */
const KEY_NAME = /^[A-Za-z0-9_.-]+$/;

type Origins = Record<ConfigKey, ConfigOrigin>;

function set(config: ShoalConfig, origins: Origins, key: ConfigKey, raw: unknown, source: string, from: ConfigOrigin) {
  (config as Record<string, unknown>)[key] = coerce(key, raw, source);
  origins[key] = from;
}

function flatten(value: unknown, prefix: string, out: [string, unknown][]): void {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      const path = prefix === "" ? k : `${prefix}.${k}`;
      // Labels and Overrides hold mappings/lists as their values, and so do some of Bacalhau's keys
      // (API.Auth.Methods): stop descending there.
      if (canonicalKey(path) !== undefined || isBacalhauConfigKey(path)) out.push([path, v]);
      else flatten(v, path, out);
    }
  } else out.push([prefix, value]);
}

/** Loaded on first use: the yaml library costs ~50 ms of start-up that most CLI calls never need. */
function parseYaml(text: string): unknown {
  return (createRequire(import.meta.url)("yaml") as typeof Yaml).parse(text);
}

function applyYamlFile(config: ShoalConfig, origins: Origins, warnings: string[], path: string): void {
  if (!existsSync(path)) throw new ConfigError(`config file ${path} does not exist`);
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid YAML: ${(e as Error).message}`);
  }
  if (doc === null || doc === undefined) return;
  if (typeof doc !== "object" || Array.isArray(doc))
    throw new ConfigError(`config file ${path} must be a YAML mapping`);
  const pairs: [string, unknown][] = [];
  flatten(doc, "", pairs);
  for (const [path_, raw] of pairs) {
    const key = canonicalKey(path_);
    if (key === undefined)
      notShoals(path_, path, warnings, () => new ConfigError(`${path}: unknown config key ${path_}`));
    else set(config, origins, key, raw, path, `file ${path}`);
  }
}

function isYamlPath(entry: string): boolean {
  return !entry.includes("=") && (/\.ya?ml$/i.test(entry) || existsSync(entry));
}

/**
 * Builds the effective config. Precedence, highest first: dedicated flags and `-c Key=Value`,
 * then SHOAL_* environment variables, then YAML files (later files win), then defaults.
 */
export function loadConfig(sources: ConfigSources = {}): ShoalConfig {
  return loadTracedConfig(sources).config;
}

/** The same, with where each key's value came from (`shoal config list`). */
export function loadTracedConfig(sources: ConfigSources = {}): TracedConfig {
  const config = defaultConfig();
  const origins = Object.fromEntries(Object.keys(config).map((key) => [key, "default"])) as Origins;
  const warnings: string[] = [];
  const settings = sources.settings ?? [];
  for (const file of [...(sources.files ?? []), ...settings.filter(isYamlPath)])
    applyYamlFile(config, origins, warnings, file);

  for (const [name, value] of Object.entries(sources.env ?? {})) {
    if (!name.startsWith("SHOAL_") || value === undefined) continue;
    const key = canonicalKey(name.slice("SHOAL_".length).replaceAll("_", "."));
    if (key !== undefined) set(config, origins, key, value, `environment variable ${name}`, `env ${name}`);
  }

  for (const entry of settings.filter((s) => !isYamlPath(s))) {
    const eq = entry.indexOf("=");
    const name = eq === -1 ? entry : entry.slice(0, eq);
    const key = canonicalKey(name.trim());
    // A misspelt key may hold a secret (-c Orchestrator.NATS.Pasword=…), and so may a secret
    // key's value: errors name the setting, never echo such a value.
    if (key === undefined) {
      const shownName = KEY_NAME.test(name.trim()) ? name.trim() : "(not shown: not a key name)";
      const source = `-c ${shownName}${eq === -1 ? "" : "=…"}`;
      notShoals(name.trim(), source, warnings, () => new ConfigError(`${source}: unknown config key ${shownName}`));
      continue;
    }
    const shown = CONFIG_KEYS[key].secret === true ? `${name}=…` : entry;
    set(config, origins, key, eq === -1 ? "true" : entry.slice(eq + 1), `-c ${shown}`, "flag -c");
  }

  for (const [name, value] of Object.entries(sources.flags ?? {})) {
    if (value === undefined) continue;
    (config as Record<string, unknown>)[name] = value;
    origins[name as ConfigKey] = "flag";
  }

  if (config.DataDir === "") config.DataDir = join(homedir(), ".shoal");
  if (config["Orchestrator.NodeManager.UnknownTimeout"] < config["Orchestrator.NodeManager.DisconnectTimeout"]) {
    throw new ConfigError(
      "Orchestrator.NodeManager.UnknownTimeout must not be shorter than Orchestrator.NodeManager.DisconnectTimeout",
    );
  }
  if (config["Orchestrator.Scheduler.ExecutionAnswerTimeout"] < 1000) {
    throw new ConfigError(
      "Orchestrator.Scheduler.ExecutionAnswerTimeout must be at least 1s: a node needs time to answer its work",
    );
  }
  if (
    config["Orchestrator.Scheduler.MaxExecutionsPerEval"] > 0 &&
    config["Orchestrator.Scheduler.ExecutionLimitBackoff"] <= 0
  ) {
    throw new ConfigError(
      "Orchestrator.Scheduler.ExecutionLimitBackoff must be more than 0 while MaxExecutionsPerEval is set " +
        "(0 turns the limit off): the rest of a job's executions wait that long",
    );
  }
  if (config["Orchestrator.Scheduler.ExecutionLimitBackoff"] > MAX_EXECUTION_LIMIT_BACKOFF_MS) {
    throw new ConfigError(
      "Orchestrator.Scheduler.ExecutionLimitBackoff must be at most 1h: an update's rollout waits that long " +
        "between its stops of earlier executions",
    );
  }
  if (config["API.EventStream.KeepAlive"] < 1000) {
    throw new ConfigError(
      "API.EventStream.KeepAlive must be at least 1s: keep-alive comments only need to come before a proxy gives up",
    );
  }
  if (config["API.EventStream.ClientBufferBytes"] < 64 * 1024) {
    throw new ConfigError("API.EventStream.ClientBufferBytes must be at least 64KiB: a few events must fit");
  }
  if (config["API.EventStream.MaxCatchUps"] < 1) {
    throw new ConfigError("API.EventStream.MaxCatchUps must be at least 1: otherwise no client could catch up");
  }
  if (
    config["Orchestrator.NodeManager.UnhealthyNodesThreshold"] <= 0 ||
    config["Orchestrator.NodeManager.UnhealthyNodesThreshold"] > 1
  ) {
    throw new ConfigError(
      "Orchestrator.NodeManager.UnhealthyNodesThreshold is a share of the fleet: more than 0, at most 1",
    );
  }
  if (
    config["Orchestrator.NodeManager.MaxRegistrationsPerSecond"] > 0 &&
    config["Orchestrator.NodeManager.RegistrationBurst"] < 1
  ) {
    throw new ConfigError(
      "Orchestrator.NodeManager.RegistrationBurst must be at least 1 while MaxRegistrationsPerSecond is set (0 turns the rate limit off)",
    );
  }
  checkTlsKeys(config);
  return { config, origins, warnings };
}
