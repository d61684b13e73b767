/**
 * A path pattern as Bacalhau's allow-list matches it (github.com/bmatcuk/doublestar v4's PathMatch):
 * `*` any characters but `/`, `?` one of them, `[abc]`/`[a-z]`/`[!a]`/`[^a]` a class, `{a,b}`
 * alternatives, `\` escapes the next character, and `**` as a whole path component any number of
 * components, none included (`/data/**` takes `/data` and everything under it). Anything else is
 * literal: `/data` is that path only, not what is under it.
 */
export function pathGlob(pattern: string): RegExp {
  const parts = pattern.split("/");
  let source = "";
  parts.forEach((part, i) => {
    const sep = i === 0 ? "" : "/";
    if (part !== "**") {
      source += sep + component(part);
      return;
    }
    // Leading: any components, each with its `/` (the next component adds none of its own); else `/` and any.
    if (i === 0) source += parts.length === 1 ? ".*" : "(?:.*/)?";
    else source += `(?:${sep}.*)?`;
  });
  return new RegExp(`^${source.replace("(?:.*/)?/", "(?:.*/)?")}$`, "s");
}

const special = /[.+^$()|\\/[\]{}*?]/;
const literal = (c: string) => (special.test(c) ? `\\${c}` : c);

/** One component (no `/`), as a regular expression. */
function component(part: string): string {
  let out = "";
  for (let i = 0; i < part.length; i++) {
    const c = part[i] as string;
    if (c === "\\" && i + 1 < part.length) out += literal(part[++i] as string);
    else if (c === "*") {
      // `/path**` is `/path*` (doublestar: a ** that is not a whole component).
      while (part[i + 1] === "*") i++;
      out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = part.indexOf("]", i + 2);
      if (end < 0) {
        out += "\\[";
        continue;
      }
      let body = part.slice(i + 1, end);
      const negated = body.startsWith("!") || body.startsWith("^");
      if (negated) body = body.slice(1);
      out += `[${negated ? "^/" : ""}${body.replace(/[\\\]^]/g, (m) => `\\${m}`)}]`;
      i = end;
    } else if (c === "{") {
      const end = part.indexOf("}", i + 1);
      if (end < 0) {
        out += "\\{";
        continue;
      }
      out += `(?:${part
        .slice(i + 1, end)
        .split(",")
        .map(component)
        .join("|")})`;
      i = end;
    } else out += literal(c);
  }
  return out;
}
