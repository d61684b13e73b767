import { labelKeyProblem, labelValueProblem, quoteLabelText } from "./label-rule.ts";

/**
 * Kubernetes label-selector syntax, as Bacalhau's `labels` query and job constraints use it:
 * `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by commas (AND).
 */
export type Requirement =
  | { readonly key: string; readonly op: "in"; readonly values: readonly string[] }
  | { readonly key: string; readonly op: "notin"; readonly values: readonly string[] }
  | { readonly key: string; readonly op: "exists" }
  | { readonly key: string; readonly op: "doesnotexist" };

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

function checkKey(key: string, whole: string): string {
  const problem = labelKeyProblem(key);
  if (problem !== undefined) throw new LabelSelectorError(`invalid label selector ${quoteLabelText(whole)}: ${problem}`);
  return key;
}

function checkValue(value: string, whole: string): string {
  const problem = labelValueProblem(value);
  if (problem !== undefined) throw new LabelSelectorError(`invalid label selector ${quoteLabelText(whole)}: ${problem}`);
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

export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return selector.requirements.every((r) => {
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
    }
  });
}
