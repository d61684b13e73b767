/**
 * Bacalhau's job templates (pkg/lib/template, `job run -V/--template-vars` and `-E/--template-envs`): the job file
 * is a Go text/template executed over a map of strings, with `missingkey=error`. Shoal renders the subset job files
 * use: `{{.name}}` (spaces inside the braces allowed), Go's trim markers `{{-` and `-}}`, string literals
 * (`{{"{{"}}`, the way to write braces) and comments `{{/* … *\/}}`. Any other action (`if`, `range`, pipelines,
 * functions, variables) is refused, naming it, rather than rendered differently from Bacalhau.
 */

import { csvFields } from "./csv-fields.ts";
import { UsageError } from "./usage-error.ts";

/** A template that cannot be rendered: what is wrong and where. */
export class TemplateError extends Error {
  override readonly name = "TemplateError";
}

/** Go's identifier: what `.name` may be (a map key that is not one cannot be written as a field in Go either). */
const FIELD = /^\.([\p{L}_][\p{L}\p{Nd}_]*)$/u;
const INTERPRETED = /^"((?:[^"\\\n]|\\.)*)"$/;
const RAW = /^`([^`]*)`$/;
const GO_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
};

const lineAt = (text: string, index: number): number => text.slice(0, index).split("\n").length;

function literal(body: string, where: string): string | undefined {
  const raw = RAW.exec(body);
  if (raw) return raw[1] as string;
  const quoted = INTERPRETED.exec(body);
  if (!quoted) return undefined;
  return (quoted[1] as string).replace(/\\(.)/g, (_, c: string) => {
    const escaped = GO_ESCAPES[c];
    if (escaped === undefined) throw new TemplateError(`failed to parse template: ${where}: unsupported escape \\${c}`);
    return escaped;
  });
}

/** Where the action starting at `start` closes (-1: nowhere): as Go's lexer, not inside a quote or a comment. */
function closeOf(text: string, start: number): number {
  let i = start;
  if (text.startsWith("/*", i)) {
    const end = text.indexOf("*/", i + 2);
    if (end === -1) return -1;
    i = end + 2;
  }
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === "}" && text[i + 1] === "}") return i;
    if (c === "`") {
      const end = text.indexOf("`", i + 1);
      if (end === -1) return -1;
      i = end;
    } else if (c === '"') {
      for (i++; i < text.length && text[i] !== '"' && text[i] !== "\n"; i++) if (text[i] === "\\") i++;
      if (text[i] !== '"') return -1;
    }
  }
  return -1;
}

/** The text with every action replaced by its value; a key `values` lacks is an error, as Go's `missingkey=error`. */
export function renderTemplate(text: string, values: Readonly<Record<string, string>>): string {
  let out = "";
  let at = 0;
  for (;;) {
    const open = text.indexOf("{{", at);
    if (open === -1) return out + text.slice(at);
    let literalText = text.slice(at, open);
    const where = `line ${lineAt(text, open)}`;
    let start = open + 2;
    // Go's trim markers: "{{- " and " -}}", the dash set apart by white space.
    if (/^-[ \t\r\n]/.test(text.slice(start, start + 2))) {
      literalText = literalText.replace(/[ \t\r\n]+$/, "");
      start += 2;
    }
    out += literalText;
    const close = closeOf(text, start);
    if (close === -1) throw new TemplateError(`failed to parse template: ${where}: unclosed action`);
    let end = close;
    let trimAfter = false;
    if (/[ \t\r\n]-$/.test(text.slice(start, close)) && close - 2 >= start) {
      trimAfter = true;
      end = close - 2;
    }
    const inside = text.slice(start, end);
    const body = inside.trim();
    at = close + 2;
    if (trimAfter) at += /^[ \t\r\n]*/.exec(text.slice(at))?.[0].length ?? 0;
    if (inside.startsWith("/*") && body.endsWith("*/")) continue;
    const field = FIELD.exec(body);
    if (field) {
      const key = field[1] as string;
      if (!Object.hasOwn(values, key))
        throw new TemplateError(
          `failed to execute template: ${where}: map has no entry for key "${key}" (give it with -V ${key}=VALUE)`,
        );
      out += values[key];
      continue;
    }
    const value = literal(body, where);
    if (value !== undefined) {
      out += value;
      continue;
    }
    throw new TemplateError(
      `failed to parse template: ${where}: {{${inside}}} is not rendered by Shoal (only {{.name}}, string literals ` +
        "and comments)",
    );
  }
}

/**
 * pflag's StringToString, as Bacalhau's `-V` reads each value: comma-separated `key=value` pairs (CSV: a pair holding
 * a comma is double-quoted), later ones winning; or what is wrong.
 */
export function templateVars(flags: readonly string[]): { vars: Record<string, string> } | { problem: string } {
  const vars: Record<string, string> = {};
  for (const flag of flags) {
    for (const pair of csvFields(flag)) {
      const eq = pair.indexOf("=");
      if (eq === -1)
        return {
          problem:
            `invalid argument ${JSON.stringify(flag)} for -V/--template-vars: ${pair} must be formatted as ` +
            "key=value",
        };
      // pflag takes "=x"; no template can name an empty key, so the value could only be a mistake.
      if (eq === 0)
        return { problem: `invalid argument ${JSON.stringify(flag)} for -V/--template-vars: ${pair} has no key` };
      vars[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return { vars };
}

/**
 * Bacalhau's `-E/--template-envs PATTERN`: the environment variables whose names the regular expression matches
 * anywhere (Go's MatchString; `*` alone is `.*`), as template values; a `-V` of the same name wins.
 */
export function templateEnv(
  pattern: string,
  env: Readonly<Record<string, string | undefined>>,
): { vars: Record<string, string> } | { problem: string } {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern === "*" ? ".*" : pattern, "u");
  } catch (e) {
    return { problem: `-E/--template-envs: ${(e as Error).message}` };
  }
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && regex.test(name)) vars[name] = value;
  return { vars };
}

/** The flags of the commands that read a job file as a template: `job run` and `job validate`. */
export const TEMPLATE_OPTIONS = {
  "template-vars": { type: "string", short: "V", multiple: true },
  "template-envs": { type: "string", short: "E" },
  "no-template": { type: "boolean" },
} as const;

export interface TemplateFlags {
  readonly "template-vars"?: string[] | undefined;
  readonly "template-envs"?: string | undefined;
  readonly "no-template"?: boolean | undefined;
}

/**
 * The values a job file is rendered with (docs/jobs.md, Templates): the environment variables `-E` picks and the
 * `-V` values, which win; undefined with --no-template, the file read as written. A flag that is wrong is a
 * UsageError.
 */
export function jobTemplateValues(flags: TemplateFlags, help: string): Readonly<Record<string, string>> | undefined {
  if (flags["no-template"]) return undefined;
  const given = templateVars(flags["template-vars"] ?? []);
  if ("problem" in given) throw new UsageError(given.problem, help);
  const pattern = flags["template-envs"];
  const picked = pattern === undefined || pattern === "" ? { vars: {} } : templateEnv(pattern, process.env);
  if ("problem" in picked) throw new UsageError(picked.problem, help);
  return { ...picked.vars, ...given.vars };
}

/** The job file's text as `job run` reads it; a template that cannot be rendered is a TemplateError. */
export const renderJobText = (text: string, values: Readonly<Record<string, string>> | undefined): string =>
  values === undefined ? text : renderTemplate(text, values);
