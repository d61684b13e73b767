/**
 * The actor as the store file keeps it beside each event (store file version 2): its type and its
 * id, each when the stored metadata JSON holds it as a string, else NULL. The writer fills them
 * from the metadata it appends; rows stored before (an upgraded file) and rows whose metadata is
 * edited in the file get them from their JSON, by this SQL, so the columns always say what the
 * metadata text says (a filter decided in memory reads that text).
 */
export function actorFromJson(metadata: string, field: "type" | "id"): string {
  const path = `'$.actor.${field}'`;
  // json_type refuses text that is not JSON: it is asked only of valid metadata (a damaged row names no actor).
  return (
    `CASE WHEN json_valid(${metadata}) THEN ` +
    `CASE WHEN json_type(${metadata}, ${path}) = 'text' THEN json_extract(${metadata}, ${path}) END END`
  );
}

function isPlain(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && (value as { toJSON?: unknown }).toJSON === undefined;
}

const NOT_PLAIN: unique symbol = Symbol("not plain");

/** An own enumerable property, as JSON.stringify reads it: undefined when it writes none, NOT_PLAIN for a getter. */
function own(value: object, key: string): unknown {
  const d = Object.getOwnPropertyDescriptor(value, key);
  if (d === undefined || d.enumerable !== true) return undefined;
  return "value" in d ? (d.value as unknown) : NOT_PLAIN;
}

/** The string JSON writes for a value; null when it writes another kind (or nothing); NOT_PLAIN: only JSON knows. */
function asText(value: unknown): string | null | typeof NOT_PLAIN {
  if (typeof value === "string") return value;
  const scalar = value === undefined || value === null || typeof value === "number" || typeof value === "boolean";
  return scalar ? null : NOT_PLAIN;
}

/**
 * The actor columns of an event appended with `metadata`, stored as `json` (its JSON.stringify):
 * read off the object when it is plain data, whose JSON says the same; otherwise (a toJSON, a
 * getter, a class instance: rare, and only JSON.stringify knows what it wrote) from the text.
 */
export function actorColumns(
  metadata: Readonly<Record<string, unknown>>,
  json: string,
): [type: string | null, id: string | null] {
  if (isPlain(metadata)) {
    const actor = own(metadata, "actor");
    if (asText(actor) === null || typeof actor === "string") return [null, null];
    if (typeof actor === "object" && actor !== null && !Array.isArray(actor) && isPlain(actor)) {
      const type = asText(own(actor, "type"));
      const id = asText(own(actor, "id"));
      if (type !== NOT_PLAIN && id !== NOT_PLAIN) return [type, id];
    }
  }
  return fromJson(json);
}

function fromJson(json: string): [type: string | null, id: string | null] {
  const actor = (JSON.parse(json) as { actor?: unknown } | null)?.actor;
  if (typeof actor !== "object" || actor === null || Array.isArray(actor)) return [null, null];
  const { type, id } = actor as { type?: unknown; id?: unknown };
  return [typeof type === "string" ? type : null, typeof id === "string" ? id : null];
}
