import { nodeIdProblem } from "../events/catalog/node-id.ts";
import { BUILT_IN_LABEL_KEYS, MAX_LABELS, labelsProblem } from "../labels/label-rule.ts";
import { parseLabelSelector, LabelSelectorError } from "../labels/label-selector.ts";
import { parseAuthUsers } from "./auth-users.ts";
import { ConfigError } from "./config-error.ts";
import { parseByteSize } from "./byte-size.ts";
import { parseDuration } from "./duration.ts";
import { CONFIG_KEYS, type ConfigKey, type HealthOverride } from "./keys.ts";

const TRUE = new Set(["true", "1", "yes", "on"]);
const FALSE = new Set(["false", "0", "no", "off"]);

function fail(source: string, key: string, message: string): never {
  throw new ConfigError(`${source}: ${key}: ${message}`);
}

function toDuration(raw: unknown, source: string, key: string): number {
  if (typeof raw === "string") {
    const ms = parseDuration(raw);
    if (ms !== undefined && ms >= 0) return ms;
  }
  return fail(source, key, `expected a duration such as 15s, 1m or 1m30s, got ${JSON.stringify(raw)}`);
}

export function parseLabels(raw: unknown, source: string, key: string): Record<string, string> {
  const entries: [string, string][] = [];
  if (typeof raw === "string" || Array.isArray(raw)) {
    const items = typeof raw === "string" ? raw.split(",") : raw;
    for (const item of items) {
      if (typeof item !== "string") fail(source, key, `expected k=v strings, got ${JSON.stringify(item)}`);
      const text = item.trim();
      if (text === "") continue;
      const eq = text.indexOf("=");
      if (eq <= 0) fail(source, key, `expected k=v, got "${text}"`);
      entries.push([text.slice(0, eq).trim(), text.slice(eq + 1).trim()]);
    }
  } else if (raw !== null && typeof raw === "object") {
    for (const [k, v] of Object.entries(raw)) {
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
        fail(source, key, `label ${k} must be a scalar`);
      }
      entries.push([k, String(v)]);
    }
  } else fail(source, key, `expected labels as k=v,k2=v2 or a mapping, got ${JSON.stringify(raw)}`);
  const labels: Record<string, string> = Object.fromEntries(entries);
  const problem = labelsProblem(labels);
  if (problem !== undefined) fail(source, key, problem);
  const total = new Set([...Object.keys(labels), ...BUILT_IN_LABEL_KEYS]).size;
  if (total > MAX_LABELS) {
    fail(
      source,
      key,
      `${total} labels with ${BUILT_IN_LABEL_KEYS.join(", ")}, which Shoal adds; a node may have at most ${MAX_LABELS}`,
    );
  }
  return labels;
}

const OVERRIDE_FIELDS = new Set(["NodeIDs", "Selector", "DisconnectTimeout", "UnknownTimeout"]);

function toOverrides(raw: unknown, source: string, key: string): HealthOverride[] {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      fail(source, key, 'expected a JSON list such as [{"Selector":"zone=edge","DisconnectTimeout":"5m"}]');
    }
  }
  if (!Array.isArray(value)) fail(source, key, "expected a list of overrides");
  return value.map((entry, i) => {
    const at = `${key}[${i}]`;
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) fail(source, at, "expected a mapping");
    const e = entry as Record<string, unknown>;
    for (const f of Object.keys(e)) {
      if (!OVERRIDE_FIELDS.has(f))
        fail(source, at, `unknown field ${f} (expected NodeIDs, Selector, DisconnectTimeout, UnknownTimeout)`);
    }
    const out: { -readonly [K in keyof HealthOverride]: HealthOverride[K] } = {};
    if (e.NodeIDs !== undefined) {
      if (!Array.isArray(e.NodeIDs) || !e.NodeIDs.every((n) => typeof n === "string" && n !== "")) {
        fail(source, at, "NodeIDs must be a list of node ids");
      }
      out.NodeIDs = e.NodeIDs as string[];
    }
    if (e.Selector !== undefined) {
      if (typeof e.Selector !== "string") fail(source, at, "Selector must be a label selector string");
      try {
        parseLabelSelector(e.Selector);
      } catch (err) {
        if (err instanceof LabelSelectorError) fail(source, at, err.message);
        throw err;
      }
      out.Selector = e.Selector;
    }
    if ((out.NodeIDs === undefined) === (out.Selector === undefined)) {
      fail(source, at, "give exactly one of NodeIDs or Selector");
    }
    if (e.DisconnectTimeout !== undefined)
      out.DisconnectTimeout = toDuration(e.DisconnectTimeout, source, `${at}.DisconnectTimeout`);
    if (e.UnknownTimeout !== undefined)
      out.UnknownTimeout = toDuration(e.UnknownTimeout, source, `${at}.UnknownTimeout`);
    return out;
  });
}

/** Turns a raw value from a flag, env var or YAML into the key's type, or throws a ConfigError. */
export function coerce(key: ConfigKey, raw: unknown, source: string): unknown {
  const def = CONFIG_KEYS[key];
  switch (def.kind) {
    case "string": {
      if (typeof raw !== "string" && typeof raw !== "number") {
        return fail(
          source,
          key,
          `expected a string, got ${def.secret === true ? (Array.isArray(raw) ? "a list" : typeof raw) : JSON.stringify(raw)}`,
        );
      }
      if (def.choices === undefined) return String(raw);
      const choice = def.choices.find((c) => c === String(raw).trim().toLowerCase());
      return choice ?? fail(source, key, `expected one of ${def.choices.join(", ")}, got ${JSON.stringify(raw)}`);
    }
    case "nodeId": {
      // Empty means "generate one"; anything else must already be a valid id, or a bad id would
      // reach the store (as the orchestrator's own registration) before anything noticed.
      const id = typeof raw === "string" || typeof raw === "number" ? String(raw) : undefined;
      if (id === undefined) return fail(source, key, `expected a node id, got ${JSON.stringify(raw)}`);
      const problem = id === "" ? undefined : nodeIdProblem(id);
      return problem === undefined ? id : fail(source, key, problem);
    }
    case "int": {
      const n = typeof raw === "number" ? raw : typeof raw === "string" && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      const max = def.max ?? 2 ** 31 - 1;
      if (Number.isInteger(n) && n >= 0 && n <= max) return n;
      return fail(source, key, `expected a whole number from 0 to ${max}, got ${JSON.stringify(raw)}`);
    }
    case "number": {
      const n =
        typeof raw === "number" ? raw : typeof raw === "string" && /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
      if (Number.isFinite(n) && n >= 0) return n;
      return fail(source, key, `expected a number of at least 0 (such as 0.1), got ${JSON.stringify(raw)}`);
    }
    case "bool":
      if (typeof raw === "boolean") return raw;
      if (typeof raw === "string" && TRUE.has(raw.toLowerCase())) return true;
      if (typeof raw === "string" && FALSE.has(raw.toLowerCase())) return false;
      return fail(source, key, `expected true or false, got ${JSON.stringify(raw)}`);
    case "duration":
      return toDuration(raw, source, key);
    case "bytes": {
      const n =
        typeof raw === "number" && Number.isSafeInteger(raw) && raw >= 0
          ? raw
          : typeof raw === "string"
            ? parseByteSize(raw)
            : undefined;
      if (n !== undefined) return n;
      return fail(source, key, `expected a size such as 512MiB, 1GiB or 1073741824, got ${JSON.stringify(raw)}`);
    }
    case "list":
      if (typeof raw === "string")
        return raw
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== "");
      if (Array.isArray(raw) && raw.every((s) => typeof s === "string")) return raw as string[];
      return fail(source, key, `expected a comma-separated list, got ${JSON.stringify(raw)}`);
    case "labels":
      return parseLabels(raw, source, key);
    case "overrides":
      return toOverrides(raw, source, key);
    case "users":
      return parseAuthUsers(raw, source, key);
  }
}
