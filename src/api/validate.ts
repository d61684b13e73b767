import { ParseResult, Schema } from "effect";
import { badRequest } from "../errors/shoal-error.ts";

/** Every inbound body and query is decoded here: unknown fields and wrong types are a 400. */
export function validate<A, I>(schema: Schema.Schema<A, I>, input: unknown, what: string): A {
  const result = Schema.decodeUnknownEither(schema, { onExcessProperty: "error", errors: "all" })(input ?? {});
  if (result._tag === "Right") return result.right;
  const issues = ParseResult.ArrayFormatter.formatErrorSync(result.left).map((i) => ({
    path: i.path.join("."),
    message: i.message,
  }));
  const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  throw badRequest(`invalid ${what}: ${summary}`, { issues });
}
