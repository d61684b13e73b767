import { Option, SchemaAST as AST, type Schema } from "effect";
import { isJsonNumber, isJsonValue, isPlainObject } from "./json-value.ts";

/** The fast path cannot vouch for this value: ask Effect, which decides and explains. */
export const NOT_VOUCHED: unique symbol = Symbol("not vouched");

/**
 * Both sides of one schema's shortcut past Effect's parser, compiled once from its AST. Neither
 * is a second judge: when one cannot vouch, the caller asks Effect, whose answer and error
 * messages stay the truth. Whatever either vouches for is plain JSON (a JSON round trip gives it
 * back unchanged) and valid for the schema.
 */
export interface SchemaFastPath {
  /**
   * Write side: what Effect's encode returns (the schema's keys in its order, keys it does not
   * name dropped), built anew, or NOT_VOUCHED.
   */
  readonly encode: (value: unknown) => unknown;
  /**
   * Read side: true only when Effect's decode would return `input` itself, deep and in key order
   * (exactly the schema's keys, in its order), so that a reader may keep the parsed JSON; checked
   * in place, nothing built.
   */
  readonly isStored: (input: unknown) => boolean;
}

type Test = (value: unknown) => boolean;

/**
 * One AST node compiled: both sides, from one walk. `test` is set for a node whose valid values
 * Effect gives back as themselves (keywords, literals, unions and refinements of those); both
 * sides are then that one test, and a union may tell them from a structure without trying.
 */
interface Compiled extends SchemaFastPath {
  readonly test?: Test;
}

/** Thrown while compiling: the schema uses a construct the fast path does not mirror. */
class Unsupported extends Error {}

/**
 * Compiles both sides for a schema made of structs, records, arrays, literals, strings, numbers,
 * booleans, unknowns (plain JSON only), unions of plain values and at most one structure, and refinements (their own
 * predicates are called, nothing is restated). Undefined for a schema with anything else (a
 * transformation, a declaration, a union of structures, a tuple …): every value then goes to
 * Effect.
 */
export function schemaFastPath(schema: Schema.Schema.Any): SchemaFastPath | undefined {
  try {
    const { encode, isStored } = compile(schema.ast);
    return { encode, isStored };
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}

const leaf = (test: Test): Compiled => ({ test, encode: (v) => (test(v) ? v : NOT_VOUCHED), isStored: test });

function compile(ast: AST.AST): Compiled {
  switch (ast._tag) {
    case "StringKeyword":
      return leaf((v) => typeof v === "string");
    case "NumberKeyword":
      // Effect takes NaN, ±Infinity and -0 as numbers; JSON does not give them back. Refused on
      // both sides: JSON.parse never makes the first three and Shoal never stores -0 (its encode
      // falls back to a JSON round trip, which writes 0), so the reader loses nothing.
      return leaf((v) => typeof v === "number" && isJsonNumber(v));
    case "BooleanKeyword":
      return leaf((v) => typeof v === "boolean");
    case "Literal": {
      const literal = ast.literal;
      if (typeof literal === "bigint" || (typeof literal === "number" && !isJsonNumber(literal)))
        throw new Unsupported("a literal JSON cannot hold");
      return leaf((v) => v === literal);
    }
    case "UnknownKeyword":
      // Effect gives any value back as itself; vouched for only when it is plain JSON all the way down
      // (a publisher's or an input's Params as the user wrote them).
      return leaf(isJsonValue);
    case "UndefinedKeyword":
      // JSON has no undefined: a written one would vanish (or become null), a read one cannot be.
      return leaf(() => false);
    case "Union":
      return compileUnion(ast);
    case "Refinement":
      return compileRefinement(ast);
    case "TupleType":
      return compileArray(ast);
    case "TypeLiteral":
      if (ast.indexSignatures.length === 0) return compileStruct(ast.propertySignatures);
      if (ast.propertySignatures.length === 0) return compileRecord(ast.indexSignatures);
      throw new Unsupported("a struct with an index signature");
    default:
      throw new Unsupported(ast._tag);
  }
}

function anyOf(tests: readonly Test[]): Test {
  if (tests.length === 1) return tests[0] as Test;
  if (tests.length === 2) {
    const [a, b] = tests as [Test, Test];
    return (v) => a(v) || b(v);
  }
  return (v) => tests.some((t) => t(v));
}

/**
 * Effect returns the first member that accepts. A plain value (a primitive or null) is given back
 * as itself by whichever member takes it, and plain values and a structure (a plain object or an
 * array) never accept the same input: with at most one structure, which member matches is known
 * without trying them in order. `undefined` members (Schema.optional's) accept nothing vouched
 * for, so they are left out.
 */
function compileUnion(ast: AST.Union): Compiled {
  const members = ast.types.filter((t) => t._tag !== "UndefinedKeyword").map(compile);
  const tests: Test[] = [];
  const structures: Compiled[] = [];
  for (const m of members) {
    if (m.test) tests.push(m.test);
    else structures.push(m);
  }
  if (structures.length > 1) throw new Unsupported("a union of structures");
  const structure = structures[0];
  if (!structure) return leaf(tests.length === 0 ? () => false : anyOf(tests));
  if (tests.length === 0) return structure;
  const plain = anyOf(tests);
  const { encode, isStored } = structure;
  return {
    encode: (v) => (plain(v) ? v : encode(v)),
    isStored: (u) => plain(u) || isStored(u),
  };
}

/**
 * The filter sees what Effect's parse of `from` gives: on write the value just built, on read the
 * input itself, which `from` has just shown to be equal to it (so no excess key reaches a filter
 * that looks at the whole value, such as a size limit).
 */
function compileRefinement(ast: AST.Refinement): Compiled {
  const from = compile(ast.from);
  const filter = ast.filter;
  const options = AST.defaultParseOption;
  const test = from.test;
  if (test) return leaf((v) => test(v) && Option.isNone(filter(v, options, ast)));
  const { encode, isStored } = from;
  return {
    encode: (v) => {
      const out = encode(v);
      return out !== NOT_VOUCHED && Option.isNone(filter(out, options, ast)) ? out : NOT_VOUCHED;
    },
    isStored: (u) => isStored(u) && Option.isNone(filter(u, options, ast)),
  };
}

/** Schema.Array(X): no fixed elements, one rest type. */
function compileArray(ast: AST.TupleType): Compiled {
  const [rest, ...more] = ast.rest;
  if (ast.elements.length > 0 || rest === undefined || more.length > 0) throw new Unsupported("a tuple");
  const { encode, isStored } = compile(rest.type);
  return {
    encode: (v) => {
      if (!Array.isArray(v)) return NOT_VOUCHED;
      const out = new Array<unknown>(v.length);
      for (let i = 0; i < v.length; i++) {
        const x = encode(v[i]);
        if (x === NOT_VOUCHED) return NOT_VOUCHED;
        out[i] = x;
      }
      return out;
    },
    isStored: (u) => {
      if (!Array.isArray(u)) return false;
      for (let i = 0; i < u.length; i++) if (!isStored(u[i])) return false;
      return true;
    },
  };
}

const hasOwn = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/**
 * Both sides take plain objects only: Effect takes a class instance (a Date) for a struct too but
 * returns a new plain object, so neither its encode nor "the input itself" would be vouched right.
 * A key is present when it is the object's own; an optional key may be absent; a present key
 * holds a vouched value (never undefined).
 */
function compileStruct(signatures: readonly AST.PropertySignature[]): Compiled {
  // Effect's `{}` takes any value but null and undefined and gives it back as itself.
  if (signatures.length === 0) throw new Unsupported("an empty struct");
  const names: string[] = [];
  const optional: boolean[] = [];
  const encoders: Compiled["encode"][] = [];
  const storedChecks: Compiled["isStored"][] = [];
  // A field whose values are given back as themselves is tested, not encoded: one call less.
  const tests: (Test | undefined)[] = [];
  for (const s of signatures) {
    // Effect builds its output by assignment, and assigning "__proto__" sets no key.
    if (typeof s.name !== "string" || s.name === "__proto__") throw new Unsupported("a symbol or __proto__ key");
    names.push(s.name);
    optional.push(s.isOptional);
    const field = compile(s.type);
    encoders.push(field.encode);
    storedChecks.push(field.isStored);
    tests.push(field.test);
  }
  const n = names.length;
  return {
    encode: (v) => {
      if (!isPlainObject(v)) return NOT_VOUCHED;
      const out: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) {
        const name = names[i] as string;
        if (!hasOwn(v, name)) {
          if (optional[i]) continue;
          return NOT_VOUCHED;
        }
        const value = v[name];
        const test = tests[i];
        if (test !== undefined) {
          if (!test(value)) return NOT_VOUCHED;
          out[name] = value;
          continue;
        }
        const x = (encoders[i] as Compiled["encode"])(value);
        if (x === NOT_VOUCHED) return NOT_VOUCHED;
        out[name] = x;
      }
      return out;
    },
    isStored: (u) => {
      if (!isPlainObject(u)) return false;
      let present = 0;
      for (let i = 0; i < n; i++) {
        const name = names[i] as string;
        const value = u[name];
        if (value === undefined) {
          if (hasOwn(u, name) || !optional[i]) return false;
          continue;
        }
        if (!hasOwn(u, name) || !(storedChecks[i] as Compiled["isStored"])(value)) return false;
        present++;
      }
      // The one rule only the read side has: Effect's output holds exactly the schema's keys in its
      // order, so the input kept in its place must too.
      let i = 0;
      let seen = 0;
      for (const key in u) {
        while (i < n && u[names[i] as string] === undefined) i++;
        if (i === n || key !== names[i]) return false;
        i++;
        seen++;
      }
      return seen === present;
    },
  };
}

/**
 * Schema.Record({ key: string (refined or not), value }). Effect drops a key its key schema
 * refuses (no error): neither side vouches for an object with one, and Effect's parse drops it.
 * Nor for an own "__proto__" key (JSON.parse makes one; an object built by assignment cannot
 * hold it). Keys keep the input's order on both sides, as Effect's output does.
 */
function compileRecord(signatures: readonly AST.IndexSignature[]): Compiled {
  const [signature, ...more] = signatures;
  if (signature === undefined || more.length > 0) throw new Unsupported("several index signatures");
  let base: AST.AST = signature.parameter;
  while (AST.isRefinement(base)) base = base.from;
  if (base._tag !== "StringKeyword") throw new Unsupported("a record key that is not a string");
  const keyTest = compile(signature.parameter).test as Test;
  const { encode, isStored } = compile(signature.type);
  return {
    encode: (v) => {
      if (!isPlainObject(v)) return NOT_VOUCHED;
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) {
        if (k === "__proto__" || !keyTest(k)) return NOT_VOUCHED;
        const x = encode(v[k]);
        if (x === NOT_VOUCHED) return NOT_VOUCHED;
        out[k] = x;
      }
      return out;
    },
    isStored: (u) => {
      if (!isPlainObject(u)) return false;
      // An inherited enumerable key (a polluted prototype) is left to Effect.
      for (const k in u) if (!hasOwn(u, k) || k === "__proto__" || !keyTest(k) || !isStored(u[k])) return false;
      return true;
    },
  };
}
