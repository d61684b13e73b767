import { Option, SchemaAST as AST, type Schema } from "effect";

/** The fast path cannot vouch for this value: ask Effect, which decides and explains. */
export const NOT_VOUCHED: unique symbol = Symbol("not vouched");

/**
 * Checks a value against a schema and returns it as Effect's `encode` would (the schema's keys in
 * the schema's order, keys it does not name dropped), or NOT_VOUCHED. Compiled once per schema.
 */
export type JsonFastEncoder = (value: unknown) => unknown;

type Step = (value: unknown) => unknown;

const parseOptions = {};

/** A plain object as JSON.parse makes them: no class instance (Date, Map) and no toJSON of its own. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A number that comes back from a JSON round trip as itself (NaN, ±Infinity and -0 do not). */
const isJsonNumber = (n: number): boolean => Number.isFinite(n) && !Object.is(n, -0);

/**
 * Compiles a step for one AST node, or undefined when the node is one this fast path does not
 * know (transformations, declarations, suspended schemas, unions of structs …): the whole
 * schema then has no fast path and every value goes to Effect.
 */
function compile(ast: AST.AST): Step | undefined {
  switch (ast._tag) {
    case "StringKeyword":
      return (v) => (typeof v === "string" ? v : NOT_VOUCHED);
    case "NumberKeyword":
      return (v) => (typeof v === "number" && isJsonNumber(v) ? v : NOT_VOUCHED);
    case "BooleanKeyword":
      return (v) => (typeof v === "boolean" ? v : NOT_VOUCHED);
    case "Literal": {
      const literal = ast.literal;
      if (typeof literal === "bigint" || (typeof literal === "number" && !isJsonNumber(literal))) return undefined;
      return (v) => (v === literal ? v : NOT_VOUCHED);
    }
    case "Union": {
      // Only unions whose members give back the value itself (literals, strings, null …): which
      // member matched then changes nothing in the output.
      const members: Step[] = [];
      for (const member of ast.types) {
        if (!returnsItself(member)) return undefined;
        const step = compile(member);
        if (!step) return undefined;
        members.push(step);
      }
      return (v) => {
        for (const member of members) if (member(v) !== NOT_VOUCHED) return v;
        return NOT_VOUCHED;
      };
    }
    case "Refinement": {
      const from = compile(ast.from);
      if (!from) return undefined;
      const refinement = ast;
      return (v) => {
        const out = from(v);
        if (out === NOT_VOUCHED) return NOT_VOUCHED;
        return Option.isNone(refinement.filter(out, parseOptions, refinement)) ? out : NOT_VOUCHED;
      };
    }
    case "TupleType": {
      // Arrays only (Schema.Array): no fixed elements, one rest type.
      if (ast.elements.length > 0 || ast.rest.length !== 1) return undefined;
      const item = compile((ast.rest[0] as AST.Type).type);
      if (!item) return undefined;
      return (v) => {
        if (!Array.isArray(v)) return NOT_VOUCHED;
        const out = new Array<unknown>(v.length);
        for (let i = 0; i < v.length; i++) {
          const x = item(v[i]);
          if (x === NOT_VOUCHED) return NOT_VOUCHED;
          out[i] = x;
        }
        return out;
      };
    }
    case "TypeLiteral":
      if (ast.indexSignatures.length === 0) return compileStruct(ast.propertySignatures);
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 1) return compileRecord(ast.indexSignatures[0] as AST.IndexSignature);
      return undefined;
    default:
      return undefined;
  }
}

function returnsItself(ast: AST.AST): boolean {
  switch (ast._tag) {
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "Literal":
      return true;
    case "Refinement":
      return returnsItself(ast.from);
    default:
      return false;
  }
}

function compileStruct(signatures: readonly AST.PropertySignature[]): Step | undefined {
  const fields: { readonly name: string; readonly optional: boolean; readonly step: Step }[] = [];
  for (const s of signatures) {
    if (typeof s.name !== "string" || s.name === "__proto__") return undefined;
    // Schema.optional(X) is `X | undefined` on the type side; undefined is not JSON, so a present
    // key must hold an X.
    const type = s.isOptional && s.type._tag === "Union" ? withoutUndefined(s.type) : s.type;
    const step = compile(type);
    if (!step) return undefined;
    fields.push({ name: s.name, optional: s.isOptional, step });
  }
  return (v) => {
    if (!isPlainObject(v)) return NOT_VOUCHED;
    const out: Record<string, unknown> = {};
    for (const { name, optional, step } of fields) {
      if (!Object.prototype.hasOwnProperty.call(v, name)) {
        if (optional) continue;
        return NOT_VOUCHED;
      }
      const x = step(v[name]);
      if (x === NOT_VOUCHED) return NOT_VOUCHED;
      out[name] = x;
    }
    return out;
  };
}

function withoutUndefined(union: AST.Union): AST.AST {
  const rest = union.types.filter((t) => t._tag !== "UndefinedKeyword");
  return rest.length === 1 ? (rest[0] as AST.AST) : AST.Union.make(rest);
}

function compileRecord(signature: AST.IndexSignature): Step | undefined {
  const key = compile(signature.parameter);
  const value = compile(signature.type);
  if (!key || !value || !returnsItself(signature.parameter)) return undefined;
  return (v) => {
    if (!isPlainObject(v)) return NOT_VOUCHED;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      if (k === "__proto__" || key(k) === NOT_VOUCHED) return NOT_VOUCHED;
      const x = value(v[k]);
      if (x === NOT_VOUCHED) return NOT_VOUCHED;
      out[k] = x;
    }
    return out;
  };
}

/**
 * A fast path for schemas without transformations: when it returns a value, that value is what
 * Effect's encode returns, is plain JSON (a JSON round trip gives it back unchanged) and decodes
 * with the same schema. When it cannot vouch (an invalid value, anything JSON would change, a
 * schema it does not know) it says so, and the caller asks Effect, whose answer and error
 * messages stay the truth. Refinements run their own predicates, so nothing is restated here.
 */
export function jsonFastEncoder(schema: Schema.Schema.Any): JsonFastEncoder {
  const step = compile(schema.ast);
  return step ?? (() => NOT_VOUCHED);
}

/**
 * Checks without building: the value itself is plain JSON and valid for the schema (keys the
 * schema does not name may be there, with JSON values), or NOT_VOUCHED.
 */
export function jsonFastCheck(schema: Schema.Schema.Any): JsonFastEncoder {
  const encode = jsonFastEncoder(schema);
  return (value) => (isJsonValue(value) && encode(value) !== NOT_VOUCHED ? value : NOT_VOUCHED);
}

/** Plain JSON all the way down: what JSON.parse(JSON.stringify(value)) gives back as an equal value. */
export function isJsonValue(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return isJsonNumber(value);
    case "object":
      if (value === null) return true;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return false;
        for (let i = 0; i < value.length; i++) if (!isJsonValue(value[i])) return false;
        return true;
      }
      if (!isPlainObject(value)) return false;
      for (const k of Object.keys(value)) if (k === "__proto__" || !isJsonValue(value[k])) return false;
      return true;
    default:
      return false;
  }
}
