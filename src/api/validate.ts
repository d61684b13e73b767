import { ParseResult, Schema, SchemaAST as AST } from "effect";
import { badRequest } from "../errors/shoal-error.ts";

interface Issue {
  readonly path: string;
  readonly message: string;
}

const LITERAL_MISMATCH = /^Expected ("(?:[^"\\]|\\.)*"|[-0-9.]+|true|false), actual (.*)$/s;
const ABSENT_EXPECTED = /^Expected undefined, actual /;

/**
 * One message per problem, not one per union member Effect tried: an optional field's "Expected
 * undefined" is dropped when the field has other issues, and a field that must be one of several
 * literals says so once ("must be one of …, got …").
 */
export function readableIssues(issues: readonly Issue[]): Issue[] {
  const byPath = new Map<string, Issue[]>();
  for (const i of issues) byPath.set(i.path, [...(byPath.get(i.path) ?? []), i]);
  const out: Issue[] = [];
  for (const [path, group] of byPath) {
    const meaningful = group.length > 1 ? group.filter((i) => !ABSENT_EXPECTED.test(i.message)) : group;
    const literals = meaningful.map((i) => LITERAL_MISMATCH.exec(i.message));
    const mismatches = meaningful.filter((_, k) => literals[k] !== null);
    const rest = meaningful.filter((_, k) => literals[k] === null);
    if (mismatches.length > 1) {
      const all = literals.flatMap((m) => (m === null ? [] : [m[1] as string]));
      // "" is how an optional choice says "the default": not one to offer.
      const offered = all.filter((v) => v !== '""');
      const actual = literals.find((m) => m !== null)?.[2] ?? "";
      out.push({ path, message: `must be one of ${(offered.length > 0 ? offered : all).join(", ")}, got ${actual}` });
    } else out.push(...mismatches);
    out.push(...rest);
  }
  return out;
}

/**
 * What an object's schema asks of a value that is no object at all (a body `[]`, `"x"` or `7`): one sentence naming
 * the fields it needs, not Effect's dump of the whole struct's type.
 */
function notAnObject(ast: AST.AST, what: string): string | undefined {
  const encoded = AST.encodedAST(ast);
  if (!AST.isTypeLiteral(encoded)) return undefined;
  const required = encoded.propertySignatures.filter((p) => !p.isOptional).map((p) => String(p.name));
  return `the ${what} must be a JSON object${required.length > 0 ? ` with ${required.join(", ")}` : ""}`;
}

/** Every inbound body and query is decoded here: unknown fields and wrong types are a 400. */
export function validate<A, I>(schema: Schema.Schema<A, I>, input: unknown, what: string): A {
  if (typeof input !== "object" || Array.isArray(input)) {
    const message = input === undefined ? undefined : notAnObject(schema.ast, what);
    if (message !== undefined) throw badRequest(message);
  }
  const result = Schema.decodeUnknownEither(schema, { onExcessProperty: "error", errors: "all" })(input ?? {});
  if (result._tag === "Right") return result.right;
  const issues = readableIssues(
    ParseResult.ArrayFormatter.formatErrorSync(result.left).map((i) => ({
      path: i.path.join("."),
      message: i.message,
    })),
  );
  const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  throw badRequest(`invalid ${what}: ${summary}`, { issues });
}
