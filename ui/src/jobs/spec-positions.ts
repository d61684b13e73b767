import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from "yaml";

/** Where a field is in the spec's text: its 1-based line, and the offset of that line's first character. */
export interface SpecPosition {
  readonly line: number;
  readonly lineStart: number;
  /** False when the field itself is not in the text (a required one missing): the nearest enclosing field's line. */
  readonly exact: boolean;
}

/** `Tasks[0].Resources.CPU` as its names and indexes; a map key may hold dots, so names are rejoined as needed. */
function segments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.matchAll(/\[(\d+)\]|([^.[\]]+)/g)) out.push(m[1] === undefined ? m[2]! : Number(m[1]));
  return out;
}

const keyText = (key: unknown): string | undefined =>
  isScalar(key) ? String(key.value) : typeof key === "string" ? key : undefined;

/**
 * The pair of `map` named by the longest run of `names` joined with dots (a label key such as `app.kubernetes.io/name`
 * is one key), exactly or else ignoring case (the API names a struct's fields in their canonical case, whatever case
 * the text wrote them in). Returns the pair and how many names it took.
 */
function findKey(
  map: Node,
  names: readonly string[],
): { pair: { key: unknown; value: unknown }; took: number } | undefined {
  if (!isMap(map)) return undefined;
  for (let took = names.length; took >= 1; took--) {
    const wanted = names.slice(0, took).join(".");
    const pairs = map.items.filter(isPair);
    const pair =
      pairs.find((p) => keyText(p.key) === wanted) ??
      pairs.find((p) => keyText(p.key)?.toLowerCase() === wanted.toLowerCase());
    if (pair !== undefined) return { pair, took };
  }
  return undefined;
}

/** The offset of the node's first character, if the parser kept it. */
const startOf = (node: unknown): number | undefined =>
  typeof node === "object" && node !== null && "range" in node ? (node as Node).range?.[0] : undefined;

/**
 * Where each field path the API named (`Tasks[0].Resources.CPU`, `Type`; "" for the job) is in the text, YAML or JSON
 * (JSON is read as the YAML it also is, keeping source positions): the line of its key, or of a list's item. A field
 * that is not there (a required one missing) is placed at the nearest field around it. Undefined when the text does
 * not parse.
 */
export function specPositions(text: string, paths: readonly string[]): (SpecPosition | undefined)[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false });
  if (doc.errors.length > 0 || doc.contents === null) return paths.map(() => undefined);
  const position = (offset: number, exact: boolean): SpecPosition => {
    const { line } = lines.linePos(offset);
    return { line, lineStart: lines.lineStarts[line - 1] ?? 0, exact };
  };
  return paths.map((path) => {
    let node: unknown = doc.contents;
    let offset = startOf(node) ?? 0;
    const rest = segments(path);
    while (rest.length > 0) {
      const next = rest[0]!;
      if (typeof next === "number") {
        const item = isSeq(node) ? node.items[next] : undefined;
        const at = startOf(item);
        if (at === undefined) return position(offset, false);
        node = item;
        offset = at;
        rest.shift();
        continue;
      }
      const names: string[] = [];
      for (const s of rest) {
        if (typeof s === "number") break;
        names.push(s);
      }
      const found = findKey(node as Node, names);
      const at = startOf(found?.pair.key);
      if (found === undefined || at === undefined) return position(offset, false);
      node = found.pair.value;
      offset = at;
      rest.splice(0, found.took);
    }
    return position(offset, true);
  });
}
