import { type Either, Option, ParseResult, Schema, SchemaAST as AST } from "effect";
import { goFold } from "./go-fold.ts";

/**
 * Reading a submitted document (decoded JSON or YAML) with an Effect schema as Go's encoding/json
 * reads it, while naming every problem rather than stopping at the first: field names match
 * case-insensitively, fields the schema does not name are ignored (unless it says they are
 * refused), and a problem in one field leaves the others read. What a field must be is its
 * schema's: leaves are decoded by Effect and refused with their `message` annotation; structs,
 * lists and maps are walked here, with the messages and checks their annotations give.
 */

/** One thing wrong with a document: where (a field path, e.g. `Tasks[0].Resources.CPU`) and what. */
export interface SpecProblem {
  readonly path: string;
  readonly message: string;
}

/** Where the problems and warnings of a walk go. */
export interface Findings {
  readonly problems: SpecProblem[];
  readonly warnings: string[];
  problem(path: string, message: string): void;
}

/** Where a node is: its path, its pattern (`Tasks[].Env.*`), and the struct or map it is a field of. */
export interface At {
  readonly path: string;
  /** The path with list indexes as `[]` and map keys as `*`: what hooks are keyed by. */
  readonly pattern: string;
  /** The key of a map entry. */
  readonly key?: string;
  /** The path of the struct it is a field of. */
  readonly parentPath: string;
  /** What of that struct was read so far (the fields before it), and the struct as submitted. */
  readonly parent: Readonly<Record<string, unknown>>;
  readonly parentRaw: Readonly<Record<string, unknown>>;
}

/**
 * A rule over a node's decoded value (a struct: what of it could be read). `hook` runs the
 * caller's rule `<pattern>#<name>` where the schema's rule puts it, for rules that interleave.
 */
export type Check = (value: unknown, at: At, f: Findings, hook: Hook) => void;
export type Hook = (name: string, value: unknown, at: At) => void;

/** The message for a required field that is absent, a blank string or an empty list. */
export const MissingMessage = Symbol.for("shoal/walk/missing");
/** The message for a struct, map or list given something else. */
export const ShapeMessage = Symbol.for("shoal/walk/shape");
/** A struct that refuses fields it does not name: the message for one. */
export const UnknownFieldMessage = Symbol.for("shoal/walk/unknown-field");
/**
 * A struct that reads only the fields it names and ignores the rest, as Go's decoder does, but says so: a warning for
 * each field it does not name (a typo such as `Contraints` would otherwise drop a rule unseen). The value: names
 * that are not fields of the struct yet are no strangers (checked by a rule of their own).
 */
export const WarnsUnknownFields = Symbol.for("shoal/walk/warns-unknown-fields");
/** A list of which only the first n items are read. */
export const ItemsRead = Symbol.for("shoal/walk/items-read");
/** Rules run once a node is read (on a struct: after its fields), in order. */
export const Checks = Symbol.for("shoal/walk/checks");
/** Run on a struct or list as submitted, before its fields or items are read. */
export const BeforeChecks = Symbol.for("shoal/walk/before-checks");

export type Obj = Readonly<Record<string, unknown>>;
export const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const isAbsent = (v: unknown): boolean => v === undefined || v === null;

/**
 * A field as Go's encoding/json finds it: the exact name first, else one that differs only in
 * case (`type: batch` is `Type`).
 */
export function field(obj: Obj, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(obj, name)) return obj[name];
  const folded = goFold(name);
  for (const key of Object.keys(obj)) if (goFold(key) === folded) return obj[key];
  return undefined;
}

/**
 * Rules a caller adds (what the schema cannot say: configured limits): by a node's pattern, run
 * after the node's own; by `<pattern>#<name>`, run where the node's own rules call `hook(name)`.
 */
export type Hooks = Readonly<Record<string, (value: unknown, at: At, f: Findings) => void>>;

const hookOf =
  (hooks: Hooks, f: Findings): Hook =>
  (name, value, at) =>
    hooks[`${at.pattern}#${name}`]?.(value, at, f);

const FAILED = Symbol("failed");
type Read = unknown;

const annotation = <T>(ast: AST.AST, key: symbol): T | undefined => ast.annotations[key] as T | undefined;

/** An optional field's type without its `undefined` (made once per field: leaves' decoders are kept by node). */
const presentTypes = new WeakMap<AST.AST, AST.AST>();
function present(ast: AST.AST): AST.AST {
  if (!AST.isUnion(ast)) return ast;
  const known = presentTypes.get(ast);
  if (known !== undefined) return known;
  const types = ast.types.filter((t) => !AST.isUndefinedKeyword(t));
  const type = types.length === 1 ? (types[0] as AST.AST) : AST.Union.make(types, ast.annotations);
  presentTypes.set(ast, type);
  return type;
}

const isStruct = (ast: AST.AST): boolean => AST.isTypeLiteral(ast) && ast.propertySignatures.length > 0;
const isMap = (ast: AST.AST): ast is AST.TypeLiteral =>
  AST.isTypeLiteral(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length > 0;
const isList = (ast: AST.AST): ast is AST.TupleType =>
  AST.isTupleType(ast) && ast.elements.length === 0 && ast.rest.length === 1;

/** Absent; or, for a list, empty; for anything but a struct, map or list, a blank string. */
const isMissing = (ast: AST.AST, v: unknown): boolean => {
  if (isAbsent(v)) return true;
  if (isList(ast)) return Array.isArray(v) && v.length === 0;
  return !AST.isTypeLiteral(ast) && typeof v === "string" && v.trim() === "";
};

const join = (path: string, name: string): string => (path === "" ? name : `${path}.${name}`);

/**
 * Whether a leaf that does not transform (strings, numbers, literals, their unions and
 * refinements) takes `raw` as it is; undefined for the others (transformations).
 */
function accepts(ast: AST.AST, raw: unknown): boolean | undefined {
  switch (ast._tag) {
    case "StringKeyword":
      return typeof raw === "string";
    case "NumberKeyword":
      return typeof raw === "number";
    case "UnknownKeyword":
      return true;
    case "Literal":
      return raw === ast.literal;
    case "Union": {
      let known = true;
      for (const member of ast.types) {
        const a = accepts(member, raw);
        if (a === true) return true;
        if (a === undefined) known = false;
      }
      return known ? false : undefined;
    }
    case "Refinement": {
      const from = accepts(ast.from, raw);
      return from === true ? Option.isNone(ast.filter(raw, AST.defaultParseOption, ast)) : from;
    }
    default:
      return undefined;
  }
}

/** Each leaf's decoder, made once: a store's recovery reads every stored job through here. */
const decoders = new WeakMap<AST.AST, (raw: unknown) => Either.Either<unknown, ParseResult.ParseError>>();

function decodeLeaf(ast: AST.AST, raw: unknown, at: At, f: Findings): Read | typeof FAILED {
  // Most fields are sound: a plain check answers them; Effect's decoder runs for the others and says what is wrong.
  if (accepts(ast, raw) === true) return raw;
  let decode = decoders.get(ast);
  if (decode === undefined) decoders.set(ast, (decode = Schema.decodeUnknownEither(Schema.make(ast))));
  const result = decode(raw);
  if (result._tag === "Right") return result.right;
  // Effect names a union's failure by its members ("Expected \"batch\""): a union's own message names it whole.
  const own = AST.isUnion(ast) ? ast.annotations[AST.MessageAnnotationId] : undefined;
  if (typeof own === "function") {
    f.problem(at.path, String((own as (issue: ParseResult.ParseIssue) => unknown)(result.left.issue)));
    return FAILED;
  }
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(result.left);
  f.problem(at.path, issue?.message ?? "is not valid");
  return FAILED;
}

function walkStruct(ast: AST.TypeLiteral, raw: Obj, at: At, hooks: Hooks, f: Findings): Record<string, unknown> {
  for (const check of annotation<readonly Check[]>(ast, BeforeChecks) ?? []) check(raw, at, f, hookOf(hooks, f));
  const unknown = annotation<(key: string) => string>(ast, UnknownFieldMessage);
  if (unknown) {
    const names = ast.propertySignatures.map((p) => goFold(String(p.name)));
    for (const key of Object.keys(raw)) if (!names.includes(goFold(key))) f.problem(join(at.path, key), unknown(key));
  }
  const known = annotation<readonly string[]>(ast, WarnsUnknownFields);
  if (known) {
    const names = [...ast.propertySignatures.map((p) => String(p.name)), ...known].map(goFold);
    for (const key of Object.keys(raw))
      if (!names.includes(goFold(key))) f.warnings.push(`unknown field ${join(at.path, key)} is ignored`);
  }
  const out: Record<string, unknown> = {};
  for (const signature of ast.propertySignatures) {
    const name = String(signature.name);
    const type = present(signature.type);
    const v = field(raw, name);
    const child: At = {
      path: join(at.path, name),
      pattern: join(at.pattern, name),
      parentPath: at.path,
      parent: out,
      parentRaw: raw,
    };
    if (!signature.isOptional && isMissing(type, v)) {
      const missing = annotation<(raw: unknown) => string>(type, MissingMessage);
      f.problem(child.path, missing ? missing(v) : "is required");
      continue;
    }
    if (isAbsent(v)) continue;
    const read = walkNode(type, v, child, hooks, f);
    if (read !== FAILED && read !== undefined) out[name] = read;
  }
  return out;
}

function walkNode(ast: AST.AST, raw: unknown, at: At, hooks: Hooks, f: Findings): Read | typeof FAILED {
  let read: Read | typeof FAILED;
  const shape = annotation<string>(ast, ShapeMessage);
  if (isStruct(ast)) {
    if (!isObject(raw)) {
      f.problem(at.path, shape ?? "must be a map of fields");
      return FAILED;
    }
    read = walkStruct(ast as AST.TypeLiteral, raw, at, hooks, f);
  } else if (isMap(ast)) {
    if (!isObject(raw)) {
      f.problem(at.path, shape ?? "must be a map");
      return FAILED;
    }
    const value = (ast.indexSignatures[0] as AST.IndexSignature).type;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(raw)) {
      const child = { ...at, path: `${at.path}.${key}`, pattern: `${at.pattern}.*`, key, parentPath: at.path };
      const entry = walkNode(value, v, child, hooks, f);
      if (entry !== FAILED) out[key] = entry;
    }
    read = out;
  } else if (isList(ast)) {
    if (!Array.isArray(raw)) {
      f.problem(at.path, shape ?? "must be a list");
      return FAILED;
    }
    for (const check of annotation<readonly Check[]>(ast, BeforeChecks) ?? []) check(raw, at, f, hookOf(hooks, f));
    const item = (ast.rest[0] as AST.Type).type;
    const out: unknown[] = [];
    const n = Math.min(raw.length, annotation<number>(ast, ItemsRead) ?? raw.length);
    for (let i = 0; i < n; i++) {
      const element = walkNode(item, raw[i], { ...at, path: `${at.path}[${i}]`, pattern: `${at.pattern}[]` }, hooks, f);
      if (element !== FAILED) out.push(element);
    }
    read = out;
  } else read = decodeLeaf(ast, raw, at, f);
  if (read === FAILED) return FAILED;
  for (const check of annotation<readonly Check[]>(ast, Checks) ?? []) check(read, at, f, hookOf(hooks, f));
  hooks[at.pattern]?.(read, at, f);
  return read;
}

/**
 * Reads `input` with `schema`: what could be read (each field that has no problem; absent where
 * it has one), every problem with its path, and the warnings the checks gave.
 */
export function walkSchema(
  schema: Schema.Schema.Any,
  input: unknown,
  hooks: Hooks,
  f: Findings,
): Record<string, unknown> | undefined {
  const at: At = { path: "", pattern: "", parentPath: "", parent: {}, parentRaw: {} };
  const read = walkNode(schema.ast, input, at, hooks, f);
  return read === FAILED ? undefined : (read as Record<string, unknown>);
}
