import { Schema } from "effect";

/**
 * Go's strconv.ParseBool spellings, which Bacalhau's server binds query booleans with (echo's
 * binder): Python clients write `True`/`False`. Empty is absent.
 */
export const GO_TRUE = ["1", "t", "T", "TRUE", "true", "True"] as const;
export const GO_FALSE = ["0", "f", "F", "FALSE", "false", "False"] as const;

export const isGoTrue = (s: string): boolean => (GO_TRUE as readonly string[]).includes(s);

export const QueryBool = Schema.transform(Schema.Literal(...GO_TRUE, ...GO_FALSE, ""), Schema.Boolean, {
  strict: true,
  decode: isGoTrue,
  encode: (b) => (b ? "true" : "false"),
});
