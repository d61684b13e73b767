import { createHash } from "node:crypto";

/** The parts of an OpenAPI 3.0 document the page shows (openapi.ts makes them). */
interface JsonSchema {
  readonly $ref?: string;
  readonly type?: string;
  readonly format?: string;
  readonly description?: string;
  readonly enum?: readonly unknown[];
  readonly items?: JsonSchema;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly patternProperties?: Readonly<Record<string, JsonSchema>>;
}
interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly description?: string;
  readonly schema?: JsonSchema;
}
type Content = Readonly<Record<string, { readonly schema?: JsonSchema }>>;
interface Operation {
  readonly operationId: string;
  readonly tags?: readonly string[];
  readonly summary?: string;
  readonly description?: string;
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly content: Content };
  readonly responses: Readonly<Record<string, { readonly description: string; readonly content?: Content }>>;
  readonly security?: readonly Readonly<Record<string, unknown>>[];
  readonly "x-shoal-capability"?: string;
}
export interface OpenApiDocument {
  readonly info: { readonly title: string; readonly version: string; readonly description?: string };
  readonly tags?: readonly { readonly name: string; readonly description?: string }[];
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>;
  readonly components?: {
    readonly securitySchemes?: Readonly<Record<string, { readonly scheme?: string; readonly description?: string }>>;
    readonly schemas?: Readonly<Record<string, JsonSchema>>;
  };
}

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:70rem;padding:1rem 2rem;color:#1b1f24;background:#fff}
h1 small{font-weight:normal;color:#57606a}
h2{border-bottom:1px solid #d0d7de;padding-bottom:.2rem;margin-top:2.5rem}
article{border:1px solid #d0d7de;border-radius:6px;padding:0 1rem 1rem;margin:1rem 0}
code,pre{font:13px/1.4 ui-monospace,monospace}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;border-radius:4px}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
nav ul{list-style:none;padding-left:0}
.m{display:inline-block;min-width:4.2rem;font:bold 12px ui-monospace,monospace;color:#fff;border-radius:3px;
text-align:center;padding:.1rem 0;margin-right:.4rem}
.get{background:#0969da}.put{background:#9a6700}.post{background:#1a7f37}.delete{background:#cf222e}
.summary{font-weight:600}
details summary{cursor:pointer;margin:.5rem 0}
.access{color:#57606a}
@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}pre{background:#161b22}
th,td,article,h2{border-color:#30363d}a{color:#4493f8}h1 small,.access{color:#8d96a0}}
`;

/** For the Content-Security-Policy: the one inline style, and nothing else, may apply. */
export const DOCS_STYLE_HASH = `sha256-${createHash("sha256").update(STYLE).digest("base64")}`;

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
const esc = (text: unknown): string => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** A description: escaped, its `code` spans shown as code. */
const prose = (text: string | undefined): string => esc(text ?? "").replace(/`([^`]+)`/g, "<code>$1</code>");

/** An id attribute from a name (operationIds may hold "/"): the same name always gives the same anchor. */
const anchor = (kind: "op" | "tag" | "schema", name: string) => `${kind}-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

const COMPONENT = "#/components/schemas/";

function schemaLink(ref: string): string {
  const name = ref.startsWith(COMPONENT) ? ref.slice(COMPONENT.length) : ref;
  return `<a href="#${anchor("schema", name)}">${esc(name)}</a>`;
}

/** A schema in a few words: its component's name (linked), or its type, format, items or choices. */
function typeOf(schema: JsonSchema | undefined): string {
  if (schema === undefined) return "";
  if (schema.$ref !== undefined) return schemaLink(schema.$ref);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives !== undefined) return alternatives.map(typeOf).join(" or ");
  if (schema.enum !== undefined)
    return `one of ${schema.enum.map((v) => `<code>${v === "" ? '""' : esc(v)}</code>`).join(", ")}`;
  if (schema.type === "array") return `array of ${typeOf(schema.items)}`;
  // A record: its values' schema is additionalProperties, or (effect's way) the pattern every key matches.
  const values =
    typeof schema.additionalProperties === "object"
      ? schema.additionalProperties
      : Object.values(schema.patternProperties ?? {})[0];
  if (Object.keys(schema.properties ?? {}).length === 0 && values !== undefined) return `map of ${typeOf(values)}`;
  return esc([schema.type ?? "any", schema.format].filter(Boolean).join(" "));
}

/** Each content type with its schema; an object written in place (not a component) with its fields. */
function contentList(content: Content | undefined): string {
  return Object.entries(content ?? {})
    .map(([type, { schema }]) => {
      const fields = schema === undefined || schema.$ref !== undefined ? [] : fieldRows(schema, "", 0);
      return (
        `<code>${esc(type)}</code>${schema === undefined ? "" : `: ${typeOf(schema)}`}` +
        (fields.length === 0 ? "" : fieldTable(fields))
      );
    })
    .join("<br>");
}

function access(op: Operation): string {
  if ((op.security ?? []).length === 0) return "Public: no credentials needed.";
  const anonymous = (op.security ?? []).some((s) => Object.keys(s).length === 0);
  return (
    `Needs <code>${esc(op["x-shoal-capability"] ?? "")}</code> (basic auth or an API key)` +
    (anonymous ? "; callers without credentials may read it while anonymous read is on." : ".")
  );
}

function parameters(op: Operation): string {
  if ((op.parameters ?? []).length === 0) return "";
  const rows = (op.parameters ?? []).map(
    (p) =>
      `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required === true ? "yes" : "no"}</td>` +
      `<td>${typeOf(p.schema)}</td><td>${prose(p.description)}</td></tr>`,
  );
  return (
    "<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Required</th><th>Type</th><th>Description</th></tr>" +
    `${rows.join("")}</table>`
  );
}

function responses(op: Operation): string {
  const rows = Object.entries(op.responses).map(
    ([status, r]) =>
      `<tr><td>${esc(status)}</td><td>${prose(r.description)}</td><td>${contentList(r.content)}</td></tr>`,
  );
  return `<h4>Responses</h4><table><tr><th>Status</th><th>Description</th><th>Body</th></tr>${rows.join("")}</table>`;
}

function operation(method: string, path: string, op: Operation): string {
  const body = op.requestBody === undefined ? "" : `<h4>Request body</h4><p>${contentList(op.requestBody.content)}</p>`;
  return (
    `<article id="${anchor("op", op.operationId)}"><h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}` +
    `</span><code>${esc(path)}</code></h3><p class="summary">${esc(op.summary ?? "")}</p>` +
    `<p>${prose(op.description)}</p><p class="access">${access(op)} Operation id: ` +
    `<code>${esc(op.operationId)}</code>.</p>${parameters(op)}${body}${responses(op)}</article>`
  );
}

/** Nested objects show their fields under dotted names (Info.NodeID), so far down. */
const MAX_DEPTH = 4;

/** One row per field of an object schema, those of its inline objects (and of its arrays' items) after it. */
function fieldRows(schema: JsonSchema, prefix: string, depth: number): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, field]) => {
    const required = (schema.required ?? []).includes(name);
    const row =
      `<tr><td><code>${esc(prefix + name)}</code></td><td>${typeOf(field)}</td><td>${required ? "yes" : "no"}</td>` +
      `<td>${prose(field.description)}</td></tr>`;
    if (depth >= MAX_DEPTH) return [row];
    const items = field.type === "array" ? field.items : undefined;
    if (field.properties !== undefined) return [row, ...fieldRows(field, `${prefix}${name}.`, depth + 1)];
    if (items?.properties !== undefined) return [row, ...fieldRows(items, `${prefix}${name}[].`, depth + 1)];
    return [row];
  });
}

const fieldTable = (rows: readonly string[]): string =>
  `<table><tr><th>Field</th><th>Type</th><th>Required</th><th>Description</th></tr>${rows.join("")}</table>`;

/** A component: its fields as a table, and its JSON Schema as written in the document (references made links). */
function schema(name: string, value: JsonSchema): string {
  const json = esc(JSON.stringify(value, null, 2)).replace(
    /&quot;(#\/components\/schemas\/[^&]+)&quot;/g,
    (_, ref: string) => `&quot;${schemaLink(ref)}&quot;`,
  );
  const rows = fieldRows(value, "", 0);
  const fields = rows.length === 0 ? `<p>${typeOf(value)}</p>` : fieldTable(rows);
  return (
    `<article id="${anchor("schema", name)}"><h3>${esc(name)}</h3><p>${prose(value.description)}</p>${fields}` +
    `<details><summary>JSON Schema</summary><pre>${json}</pre></details></article>`
  );
}

/**
 * The document as one HTML page: the operations grouped by tag (each under its first tag, listed under every one),
 * their parameters, bodies, responses and access, the authentication schemes and the schemas. No script, and nothing
 * loaded from elsewhere: it works offline and under a Content-Security-Policy that allows only its own style.
 */
export function apiDocsPage(doc: OpenApiDocument): string {
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );
  const tags = doc.tags ?? [];
  const nav = tags.map(({ name }) => {
    const items = operations
      .filter(({ op }) => op.tags?.includes(name) === true)
      .map(
        ({ path, method, op }) =>
          `<li><a href="#${anchor("op", op.operationId)}"><span class="m ${esc(method)}">` +
          `${esc(method.toUpperCase())}</span><code>${esc(path)}</code></a> ${esc(op.summary ?? "")}</li>`,
      );
    return `<h3><a href="#${anchor("tag", name)}">${esc(name)}</a></h3><ul>${items.join("")}</ul>`;
  });
  const sections = tags.map(({ name, description }) => {
    const own = operations.filter(({ op }) => op.tags?.[0] === name);
    return (
      `<section id="${anchor("tag", name)}"><h2>${esc(name)}</h2><p>${prose(description)}</p>` +
      `${own.map(({ method, path, op }) => operation(method, path, op)).join("")}</section>`
    );
  });
  const schemes = Object.entries(doc.components?.securitySchemes ?? {}).map(
    ([name, s]) => `<li><code>${esc(name)}</code> (${esc(s.scheme ?? "")}): ${prose(s.description)}</li>`,
  );
  const schemas = Object.entries(doc.components?.schemas ?? {}).map(([name, value]) => schema(name, value));
  const title = `${doc.info.title} API ${doc.info.version}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${STYLE}</style></head><body>
<header><h1>${esc(doc.info.title)} API <small>v${esc(doc.info.version)}</small></h1>
<p>${prose(doc.info.description)}</p>
<p>This page is generated from the OpenAPI document <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>, which
is generated from the routes the server registers.</p></header>
<nav aria-label="Operations"><h2>Operations</h2>${nav.join("\n")}
<p><a href="#authentication">Authentication</a> · <a href="#schemas">Schemas</a></p></nav>
<section id="authentication"><h2>Authentication</h2>
<p>Send <code>Authorization: Bearer &lt;API key&gt;</code> or <code>Authorization: Basic …</code>.
Each operation names
the capability it needs; public ones need none.</p><ul>${schemes.join("")}</ul></section>
<main>${sections.join("\n")}</main>
<section id="schemas"><h2>Schemas</h2>${schemas.join("\n")}</section>
</body></html>
`;
}
