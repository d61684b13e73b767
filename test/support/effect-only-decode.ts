import { ParseResult, Schema } from "effect";
import { ProtocolError, unpack } from "../../src/transport/codec.ts";

/**
 * What `decode(schema, bytes)` answered before it took a shortcut past Effect: Effect's parser alone, with
 * its explanation. The reference the shortcut is held equal to.
 */
export function effectOnlyDecode<A, I>(schema: Schema.Schema<A, I>, bytes: Uint8Array): A {
  const result = Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(unpack(bytes));
  if (result._tag === "Left") throw new ProtocolError(ParseResult.TreeFormatter.formatErrorSync(result.left));
  return result.right;
}
