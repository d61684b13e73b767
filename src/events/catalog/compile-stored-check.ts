import { Option, type Schema, SchemaAST as AST } from "effect";

/**
 * True only when `input` decodes with the schema AND the decoded value would be `input` itself,
 * deep and in key order: no excess keys, no `undefined`, properties in the schema's order. Then a
 * reader may keep the parsed JSON as it is; on false it decodes with Effect as before, which gives
 * the same value or the same error. So this is a shortcut, never a second judge.
 */
export type StoredCheck = (input: unknown) => boolean;

const hasOwn = (o: object, key: PropertyKey) => Object.prototype.hasOwnProperty.call(o, key);

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u);

/** Thrown while compiling: the schema uses a construct this checker does not mirror. */
class Unsupported extends Error {}

/**
 * Compiles a check for the stored (encoded) form of a schema made of structs, records, arrays,
 * literals, strings, numbers, booleans, nullable unions of those and refinements (filters: their
 * own predicates are called). Undefined for a schema with anything else (a transformation, a
 * union of structs…): its events are always decoded by Effect.
 */
export function compileStoredCheck(schema: Schema.Schema.Any): StoredCheck | undefined {
  try {
    return compile(schema.ast);
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}

function compile(ast: AST.AST): StoredCheck {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string";
    case "NumberKeyword":
      return (u) => typeof u === "number";
    case "BooleanKeyword":
      return (u) => typeof u === "boolean";
    case "Literal": {
      const literal = ast.literal;
      return (u) => u === literal;
    }
    case "UndefinedKeyword":
      // JSON has no undefined; a value that is undefined is left to Effect.
      return () => false;
    case "Union":
      return compileUnion(ast);
    case "Refinement":
      return compileRefinement(ast);
    case "TupleType":
      return compileArray(ast);
    case "TypeLiteral":
      return compileStruct(ast);
    default:
      throw new Unsupported(ast._tag);
  }
}

/**
 * Unions of plain values and at most one structure (an optional struct is one with undefined):
 * Effect returns the first member that decodes, which for a literal, a keyword or null is the
 * input itself, and plain values and a structure never accept the same input.
 */
function compileUnion(ast: AST.Union): StoredCheck {
  const atomic = ["StringKeyword", "NumberKeyword", "BooleanKeyword", "Literal", "UndefinedKeyword"];
  if (ast.types.filter((t) => !atomic.includes(t._tag)).length > 1) throw new Unsupported("a union of structures");
  const members = ast.types.map(compile);
  if (members.length === 2) {
    const [a, b] = members as [StoredCheck, StoredCheck];
    return (u) => a(u) || b(u);
  }
  return (u) => members.some((m) => m(u));
}

function compileRefinement(ast: AST.Refinement): StoredCheck {
  const from = compile(ast.from);
  const filter = ast.filter;
  return (u) => from(u) && Option.isNone(filter(u, AST.defaultParseOption, ast));
}

/** Schema.Array(X): no fixed elements, one rest type. */
function compileArray(ast: AST.TupleType): StoredCheck {
  const [rest, ...more] = ast.rest;
  if (ast.elements.length > 0 || rest === undefined || more.length > 0) throw new Unsupported("a tuple");
  const item = compile(rest.type);
  return (u) => {
    if (!Array.isArray(u)) return false;
    for (let i = 0; i < u.length; i++) if (!item(u[i])) return false;
    return true;
  };
}

function compileStruct(ast: AST.TypeLiteral): StoredCheck {
  const { propertySignatures, indexSignatures } = ast;
  if (propertySignatures.length === 0 && indexSignatures.length === 0) throw new Unsupported("an empty struct");
  if (propertySignatures.length > 0 && indexSignatures.length > 0) throw new Unsupported("a struct with an index signature");
  if (indexSignatures.length > 0) return compileRecord(indexSignatures);
  const names: string[] = [];
  const optional: boolean[] = [];
  const checks: StoredCheck[] = [];
  for (const ps of propertySignatures) {
    if (typeof ps.name !== "string") throw new Unsupported("a symbol key");
    names.push(ps.name);
    optional.push(ps.isOptional);
    checks.push(compile(ps.type));
  }
  const n = names.length;
  return (u) => {
    if (!isRecord(u)) return false;
    let present = 0;
    for (let i = 0; i < n; i++) {
      const name = names[i] as string;
      const value = u[name];
      if (value === undefined) {
        if (hasOwn(u, name) || !optional[i]) return false;
        continue;
      }
      if (!hasOwn(u, name) || !(checks[i] as StoredCheck)(value)) return false;
      present++;
    }
    // Effect's output has exactly the schema's keys, in its order: so must the input.
    let i = 0;
    let seen = 0;
    for (const key in u) {
      while (i < n && u[names[i] as string] === undefined) i++;
      if (i === n || key !== names[i]) return false;
      i++;
      seen++;
    }
    return seen === present;
  };
}

/** Schema.Record({ key: string (refined or not), value }): every own key and value checked; order kept by Effect. */
function compileRecord(indexSignatures: readonly AST.IndexSignature[]): StoredCheck {
  if (indexSignatures.length > 1) throw new Unsupported("several index signatures");
  const signature = indexSignatures[0] as AST.IndexSignature;
  let keyType: AST.AST = signature.parameter;
  while (AST.isRefinement(keyType)) keyType = keyType.from;
  if (keyType._tag !== "StringKeyword") throw new Unsupported("a non-string record key");
  const key = compile(signature.parameter);
  const value = compile(signature.type);
  return (u) => {
    if (!isRecord(u)) return false;
    for (const k in u) {
      // An inherited enumerable key (a polluted prototype) is left to Effect, and so is an own
      // "__proto__" (JSON.parse makes one; Effect's output cannot hold it).
      if (k === "__proto__" || !hasOwn(u, k) || !key(k) || !value(u[k])) return false;
    }
    return true;
  };
}
