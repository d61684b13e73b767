/**
 * The one rule for labels entering Shoal — the compute protocol, the `Labels` config key and
 * `--labels`, label selectors: Kubernetes' syntax and sizes (apimachinery's IsQualifiedName
 * and IsValidLabelValue), plus a cap on how many labels a node may carry.
 *
 * Stored events are decoded with a looser schema (StoredNodeInfo) that must stay as it is:
 * this rule may only ever be stricter than what is already stored.
 */

/** The name part of a key, and a value: Kubernetes' 63-character qualified name. */
export const MAX_LABEL_NAME_LENGTH = 63;
export const MAX_LABEL_VALUE_LENGTH = 63;
/** A DNS subdomain, as Kubernetes allows for the prefix. */
export const MAX_LABEL_PREFIX_LENGTH = 253;
/**
 * The whole key, prefix included. Kubernetes caps only the parts (up to 317 in total); earlier
 * Shoal versions store keys of at most 253 characters, and every key accepted must stay readable.
 */
export const MAX_LABEL_KEY_LENGTH = 253;
/** Per node, the built-in labels included. */
export const MAX_LABELS = 64;
/** Labels every node reports about itself on top of its configured ones (built-in-labels.ts). */
export const BUILT_IN_LABEL_KEYS = ["name", "os_type", "os_arch", "Operating-System", "Architecture"] as const;

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const NAME_SHAPE = "letters, digits, '-', '_' or '.', starting and ending with a letter or digit";

/** Quoted for a message: control characters escaped, long input cut (both come from the sender). */
export function quoteLabelText(text: string): string {
  return text.length > 70 ? `${JSON.stringify(text.slice(0, 64))}… (${text.length} characters)` : JSON.stringify(text);
}

/** Why `key` is not a valid label key, or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const q = quoteLabelText(key);
  if (key.length > MAX_LABEL_KEY_LENGTH) return `label key ${q} is longer than ${MAX_LABEL_KEY_LENGTH} characters`;
  const slash = key.indexOf("/");
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (prefix !== undefined) {
    if (prefix === "") return `label key ${q} has an empty prefix before '/'`;
    if (prefix.length > MAX_LABEL_PREFIX_LENGTH || !DNS_SUBDOMAIN.test(prefix)) {
      return `label key ${q}: the prefix must be a DNS subdomain (lowercase letters, digits, '-' and '.', at most ${MAX_LABEL_PREFIX_LENGTH} characters, e.g. example.com)`;
    }
  }
  if (name === "") return `label key ${q} has an empty name`;
  if (name.length > MAX_LABEL_NAME_LENGTH)
    return `label key ${q}: the name after any prefix is longer than ${MAX_LABEL_NAME_LENGTH} characters`;
  if (!NAME.test(name))
    return `label key ${q}: the name must be ${NAME_SHAPE}${name.includes("/") ? " (at most one '/')" : ""}`;
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is (the empty value is valid). */
export function labelValueProblem(value: string): string | undefined {
  if (value === "") return undefined;
  const q = quoteLabelText(value);
  if (value.length > MAX_LABEL_VALUE_LENGTH)
    return `label value ${q} is longer than ${MAX_LABEL_VALUE_LENGTH} characters`;
  if (!NAME.test(value)) return `label value ${q} must be empty or ${NAME_SHAPE}`;
  return undefined;
}

/** Why this set of labels may not enter Shoal (too many, or the first bad key or value), or undefined. */
export function labelsProblem(labels: Readonly<Record<string, string>>): string | undefined {
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) return `${entries.length} labels; a node may have at most ${MAX_LABELS}`;
  for (const [key, value] of entries) {
    const problem = labelKeyProblem(key) ?? labelValueProblem(value);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
