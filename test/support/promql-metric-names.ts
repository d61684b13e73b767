/** PromQL's words that are neither functions nor metrics. */
const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "inf", "nan"]);

/**
 * The metric names a PromQL expression selects: what is left once strings, label matchers, ranges and the label lists
 * of `by`, `without`, `on`, `ignoring` and `group_*` are taken out, less function calls, keywords and numbers. Enough
 * for a dashboard's expressions; not a PromQL parser.
 */
export function promqlMetricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names: string[] = [];
  for (const match of bare.matchAll(/(?<![\w.])[a-zA-Z_:][\w:]*/g)) {
    const rest = bare.slice((match.index ?? 0) + match[0].length);
    if (/^\s*\(/.test(rest) || KEYWORDS.has(match[0].toLowerCase())) continue;
    names.push(match[0]);
  }
  return names;
}

/** The sample names of a Prometheus text exposition (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
export function exposedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    names.add(line.slice(0, line.search(/[{ ]/)));
  }
  return names;
}
