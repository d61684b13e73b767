import { quoteLabelText } from "./label-rule.ts";

/**
 * Kubernetes label-selector syntax, as Bacalhau's `labels` query and job constraints use it:
 * `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by commas (AND).
 * Job constraints also carry Kubernetes' `gt` and `lt` (an integer comparison); the text parser
 * below does not produce them, since the node list's `labels` query never had them.
 */
export type Requirement =
  | { readonly key: string; readonly op: "in"; readonly values: readonly string[] }
  | { readonly key: string; readonly op: "notin"; readonly values: readonly string[] }
  | { readonly key: string; readonly op: "exists" }
  | { readonly key: string; readonly op: "doesnotexist" }
  | { readonly key: string; readonly op: "gt" | "lt"; readonly value: bigint };

export interface LabelSelector {
  readonly requirements: readonly Requirement[];
  readonly text: string;
}

export class LabelSelectorError extends Error {
  override readonly name = "LabelSelectorError";
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (depth < 0) throw new LabelSelectorError(`unbalanced ')' in label selector "${text}"`);
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  if (depth !== 0) throw new LabelSelectorError(`unbalanced '(' in label selector "${text}"`);
  parts.push(current);
  return parts.map((p) => p.trim());
}

/**
 * A selector queries what is stored, and stores hold labels older Shoals accepted (an uppercase
 * prefix, say) that the stricter rule for new labels (label-rule.ts) refuses: so a selector
 * accepts the wider shape it always did, within the stored size limits.
 */
const QUERY_KEY = /^([a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?\/)?[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?$/;
const QUERY_VALUE = /^([a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?)?$/;
const MAX_STORED_KEY = 253;
const MAX_VALUE = 63;

function checkKey(key: string, whole: string): string {
  if (key.length > MAX_STORED_KEY || !QUERY_KEY.test(key)) {
    throw new LabelSelectorError(
      `invalid label selector ${quoteLabelText(whole)}: label key ${quoteLabelText(key)} is not a label key`,
    );
  }
  return key;
}

function checkValue(value: string, whole: string): string {
  if (value.length > MAX_VALUE || !QUERY_VALUE.test(value)) {
    throw new LabelSelectorError(
      `invalid label selector ${quoteLabelText(whole)}: label value ${quoteLabelText(value)} must be empty or up to ${MAX_VALUE} letters, digits, '-', '_' or '.', starting and ending with a letter or digit`,
    );
  }
  return value;
}

function parseRequirement(part: string, whole: string): Requirement {
  const setMatch = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part);
  if (setMatch) {
    const values = (setMatch[3] as string).split(",").map((v) => checkValue(v.trim(), whole));
    return { key: checkKey(setMatch[1] as string, whole), op: setMatch[2] as "in" | "notin", values };
  }
  const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(part);
  if (cmp) {
    const key = checkKey(cmp[1] as string, whole);
    const value = checkValue(cmp[3] as string, whole);
    return cmp[2] === "!=" ? { key, op: "notin", values: [value] } : { key, op: "in", values: [value] };
  }
  if (part.startsWith("!")) return { key: checkKey(part.slice(1).trim(), whole), op: "doesnotexist" };
  return { key: checkKey(part, whole), op: "exists" };
}

export function parseLabelSelector(text: string): LabelSelector {
  const trimmed = text.trim();
  if (trimmed === "") return { requirements: [], text: "" };
  const parts = splitTopLevel(trimmed);
  if (parts.some((p) => p === "")) throw new LabelSelectorError(`empty requirement in label selector "${text}"`);
  return { requirements: parts.map((p) => parseRequirement(p, trimmed)), text: trimmed };
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Kubernetes' reading of a gt/lt operand (Go's strconv.ParseInt(s, 10, 64)): undefined when it is not one. */
export function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return selector.requirements.every((r) => matchesRequirement(r, labels));
}

export function matchesRequirement(r: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  switch (r.op) {
    case "exists":
      return has;
    case "doesnotexist":
      return !has;
    case "in":
      return has && r.values.includes(labels[r.key] as string);
    case "notin":
      return !has || !r.values.includes(labels[r.key] as string);
    case "gt":
    case "lt": {
      // Kubernetes: the node's value must itself be an integer, else the requirement fails.
      const value = has ? parseInt64(labels[r.key] as string) : undefined;
      if (value === undefined) return false;
      return r.op === "gt" ? value > r.value : value < r.value;
    }
  }
}
