/**
 * JSON with object keys sorted (undefined members left out, as JSON.stringify does), so equal
 * strings mean equal values. `lists: "sets"` also sorts arrays, for lists whose order means nothing.
 */
export function canonicalJson(value: unknown, lists: "ordered" | "sets" = "ordered"): string {
  const canonical = (v: unknown): string => {
    if (Array.isArray(v)) {
      const items = v.map(canonical);
      return `[${(lists === "sets" ? items.sort() : items).join(",")}]`;
    }
    if (v !== null && typeof v === "object") {
      const entries = Object.entries(v as Record<string, unknown>)
        .filter(([, member]) => member !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, member]) => `${JSON.stringify(k)}:${canonical(member)}`).join(",")}}`;
    }
    return JSON.stringify(v);
  };
  return canonical(value);
}
