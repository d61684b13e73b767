import { SchemaAST as AST, type Schema } from "effect";
import { badRequest } from "../errors/shoal-error.ts";
import { goFold } from "../events/catalog/go-fold.ts";

/**
 * On a field its route leaves open (Schema.Unknown, checked later by rules of its own), the schema whose field
 * names its keys are, so that they are matched as everywhere else: PUT /jobs' Job is a SubmittedJob.
 */
export const KeysAs = Symbol.for("shoal/api/keys-as");

/** The struct fields an object may have (by name and by Go's folding) and the value of the keys that are data. */
interface Shape {
  readonly fields: ReadonlyMap<string, AST.AST>;
  readonly folded: ReadonlyMap<string, string>;
  readonly data: AST.AST | undefined;
}

/** The encoded side of a node, where a request's JSON is: through suspensions, refinements and transformations. */
function encoded(ast: AST.AST): AST.AST {
  for (;;) {
    const keysAs = ast.annotations[KeysAs] as Schema.Schema.Any | undefined;
    if (keysAs !== undefined) ast = keysAs.ast;
    else if (AST.isSuspend(ast)) ast = ast.f();
    else if (AST.isRefinement(ast)) ast = ast.from;
    else if (AST.isTransformation(ast)) ast = ast.from;
    else return ast;
  }
}

/** The members of a union (nested unions flattened), or the node alone. */
const members = (ast: AST.AST): AST.AST[] => {
  const node = encoded(ast);
  return AST.isUnion(node) ? node.types.flatMap(members) : [node];
};

const shapes = new WeakMap<AST.AST, Shape | null>();

/** The object shape a node describes (a struct, a map, or a union of them), or null when it describes none. */
function shapeOf(ast: AST.AST): Shape | null {
  const known = shapes.get(ast);
  if (known !== undefined) return known;
  const literals = members(ast).filter(AST.isTypeLiteral);
  const fields = new Map<string, AST.AST>();
  const folded = new Map<string, string>();
  let data: AST.AST | undefined;
  for (const literal of literals) {
    for (const signature of literal.propertySignatures) {
      if (typeof signature.name !== "string" || fields.has(signature.name)) continue;
      fields.set(signature.name, signature.type);
      // Two names that fold alike: Go takes the first declared.
      if (!folded.has(goFold(signature.name))) folded.set(goFold(signature.name), signature.name);
    }
    data ??= literal.indexSignatures[0]?.type;
  }
  const shape = literals.length === 0 ? null : { fields, folded, data };
  shapes.set(ast, shape);
  return shape;
}

/** The item type of a list (or of a union's list member), if the node describes one. */
function itemOf(ast: AST.AST): AST.AST | undefined {
  for (const member of members(ast)) if (AST.isTupleType(member)) return member.rest[0]?.type;
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const at = (path: string) => (path === "" ? "at the top" : `in ${path}`);

function canonical(ast: AST.AST, value: unknown, path: string): unknown {
  if (Array.isArray(value)) {
    const item = itemOf(ast);
    return item === undefined ? value : value.map((v, i) => canonical(item, v, `${path}[${i}]`));
  }
  if (!isObject(value)) return value;
  const shape = shapeOf(ast);
  if (shape === null) return value;
  const out: Record<string, unknown> = {};
  const sentAs = new Map<string, string>();
  for (const [key, v] of Object.entries(value)) {
    const name = shape.fields.has(key) ? key : shape.folded.get(goFold(key));
    if (name === undefined) {
      // Not a field: a map's key is data, kept as sent; anything else is left for validation to refuse.
      out[key] = shape.data === undefined ? v : canonical(shape.data, v, `${path}.${key}`);
      continue;
    }
    const earlier = sentAs.get(name);
    if (earlier !== undefined) {
      throw badRequest(
        `both "${earlier}" and "${key}" are given ${at(path)}: field names match ignoring case, as Go's decoder ` +
          `matches them, so both would be ${name}; give it once`,
      );
    }
    sentAs.set(name, key);
    out[name] = canonical(shape.fields.get(name)!, v, path === "" ? name : `${path}.${name}`);
  }
  return out;
}

/**
 * A request body (or a job file, for `shoal job validate`) with its field names as the schema spells them, matched
 * as Bacalhau's server (Go's encoding/json) matches them: the exact name, else one that differs only in case
 * (`{"action": "approve"}`). Two keys for one field are a 400 naming both. Keys of maps (Labels, Env, Meta, Params)
 * are data and kept as sent.
 */
export function goBodyKeys(schema: Schema.Schema.Any, body: unknown): unknown {
  return canonical(schema.ast, body, "");
}
